"""rocm-migrate: find what stands between a CUDA codebase and AMD ROCm."""

__version__ = "0.1.0"
