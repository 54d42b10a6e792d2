# python profile (placeholder)
