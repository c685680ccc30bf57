"""Pipeline schedules (Sec. 5, Fig. 5): the ``alpa-pipeline-schedule``,
``alpa-accumulate-gradients`` and ``alpa-mark-apply-gradients`` passes (the clock tables
are ``plans.schedules``)."""
