"""``repro-matrix check``: on a GPU host, the real cuda lane against cuda-sim, scenario by scenario and cell
by cell (docs/gpu.md)."""
