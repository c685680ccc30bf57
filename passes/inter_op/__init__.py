"""Inter-operator parallelism (Sec. 5): operator clustering, the stage/mesh DP, stage functions."""
