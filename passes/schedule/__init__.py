"""Pipeline schedules (Sec. 5, Fig. 5): the ``alpa-pipeline-schedule`` and
``alpa-accumulate-gradients`` passes (the clock tables are ``plans.schedules``)."""
