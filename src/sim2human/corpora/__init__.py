"""Human dialogue corpora read into typed transcripts (never copied into the package)."""
