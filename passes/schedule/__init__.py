"""Pipeline schedules (Sec. 5, Fig. 5): clock tables and the ``alpa-pipeline-schedule`` pass."""
