"""The extraction budget (pure): a node cap with a reason, a CPU cap with a cheaper rung and a flag."""

from __future__ import annotations

from boilerstrip.extraction import ExtractionParams, extract

PAGE = (
    "<html><head><title>t</title></head><body><nav><a href='/'>Home</a> <a href='/x'>Menu item</a></nav><main>"
    + "".join(f"<p>Paragraph {i} has enough ordinary words to count as real prose on a page.</p>" for i in range(60))
    + "</main></body></html>"
)


def test_over_the_node_budget_is_empty_with_a_reason() -> None:
    result = extract(PAGE, params=ExtractionParams(max_nodes=50))
    assert result.text == "" and result.reason == "over_budget"
    assert "extraction_budget:nodes" in result.flags
    assert {a.reason for a in result.attempts} == {"over_budget"}
    assert extract(PAGE, params=ExtractionParams(max_nodes=0)).reason is None  # 0: no limit


def test_over_the_cpu_budget_the_plaintext_rung_answers_flagged() -> None:
    result = extract(PAGE, params=ExtractionParams(max_cpu_s=1e-9))
    assert result.method == "plaintext" and "extraction_budget:cpu" in result.flags
    assert "Paragraph 59 has enough" in result.text and "Menu item" not in result.text
    assert [a.method for a in result.attempts] == ["semantic", "density", "bodytext", "plaintext"]
    assert extract(PAGE).method in ("semantic", "density") and not extract(PAGE).flags
