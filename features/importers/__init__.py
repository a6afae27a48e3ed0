"""Importers of public datasets (placeholder; being written)."""
