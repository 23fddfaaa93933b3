"""Tiny shared fixtures."""
