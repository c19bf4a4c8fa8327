"""Benchmarks of emergent-memory: latency at scale, retrieval quality, dedup calibration."""
