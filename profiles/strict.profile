# strict profile (placeholder)
