"""descriptors."""
