"""Stage 9: turn findings, estimates and BOMs into files and terminal output."""
