"""Reports a person reads: markdown now; HTML with plots where available."""
