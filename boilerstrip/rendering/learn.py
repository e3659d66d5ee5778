"""Per-host learning: once most of a host's pages needed a browser, send later ones straight to it.

Only static verdicts are evidence (a page sent straight to the browser says nothing about whether it
needed it), so a learned host still has every ``learn_recheck_every``-th page fetched static and judged;
the verdicts sit in a sliding window, so a host whose pages stop needing the browser is unlearned.
"""

from __future__ import annotations

from collections import OrderedDict, deque
from dataclasses import dataclass, field

from boilerstrip.rendering.params import HostLearnParams

__all__ = ["HostRenderLearner", "HostState"]


@dataclass
class HostState:
    verdicts: deque = field(default_factory=deque)  # True = needed the browser
    since_check: int = 0  # pages sent straight to the browser since the last static re-check

    def share(self) -> float:
        return sum(self.verdicts) / len(self.verdicts) if self.verdicts else 0.0


class HostRenderLearner:
    """Counts static verdicts per host and says where the next page of a host should go."""

    def __init__(self, params: HostLearnParams | None = None) -> None:
        self.params = params or HostLearnParams()
        self._hosts: OrderedDict[str, HostState] = OrderedDict()

    def _state(self, host: str) -> HostState:
        state = self._hosts.get(host)
        if state is None:
            state = self._hosts[host] = HostState(deque(maxlen=self.params.learn_window_pages))
            while len(self._hosts) > self.params.learn_max_hosts:
                self._hosts.popitem(last=False)
        else:
            self._hosts.move_to_end(host)
        return state

    def is_learned(self, host: str) -> bool:
        """The host's recent static verdicts mostly needed the browser."""
        if not self.params.learn_enabled:
            return False
        state = self._hosts.get(host)
        if state is None or len(state.verdicts) < self.params.learn_min_pages:
            return False
        return state.share() >= self.params.learn_min_share

    def route(self, host: str) -> str:
        """``"browser"`` (straight to the browser), ``"recheck"`` (static, a learned host's periodic
        re-check) or ``"static"`` (static first, as for any page)."""
        if not self.is_learned(host):
            return "static"
        state = self._state(host)
        state.since_check += 1
        if state.since_check >= self.params.learn_recheck_every:
            state.since_check = 0
            return "recheck"
        return "browser"

    def record(self, host: str, needed_browser: bool) -> None:
        """Record the verdict on a page of ``host`` that was fetched static."""
        self._state(host).verdicts.append(bool(needed_browser))

    def snapshot(self) -> dict[str, dict[str, float]]:
        return {
            host: {"pages": len(s.verdicts), "share": round(s.share(), 3), "learned": self.is_learned(host)}
            for host, s in self._hosts.items()
        }
