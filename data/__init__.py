"""Small reference data the project made itself (see README.md here)."""
