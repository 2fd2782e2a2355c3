"""What fits in the model's context: the meter (context_meter.py) and compaction, which
summarises the older history when it would not fit (compactor.py)."""
