"""The host's GPUs as nvidia-smi sees them: devices, the processes holding memory, and the renderings."""
