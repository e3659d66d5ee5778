"""Recurring crawls on a schedule: jobs kept in a state folder, each run a child ``boilerstrip crawl``.

- :mod:`.jobs`: the job definitions (``ScheduledJob``) and their file, ``<state>/schedule.json`` (pure).
- :mod:`.runner`: one run of a job (:func:`run_job`) and the foreground scheduler (:class:`Scheduler`,
  APScheduler 3.x) behind ``boilerstrip schedule run``.
"""

from .jobs import JobError, JobStore, ScheduledJob, check_name, parse_every
from .runner import Scheduler, next_due, run_job, trigger_of, utc_stamp

__all__ = ["JobError", "JobStore", "ScheduledJob", "check_name", "parse_every", "Scheduler", "next_due",
           "run_job", "trigger_of", "utc_stamp"]
