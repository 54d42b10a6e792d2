# skillrun default profile (placeholder)
