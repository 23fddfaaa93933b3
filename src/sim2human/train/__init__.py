"""Training: the PPO loop (``ppo``), its torch-free settings (``config``), held-out telemetry."""
