include missing-profile-xyz
