skillrun-statement/1
name: hello
version: 1.0
digest: sha256:b9140aa54fdae3467edf4f1915c6f40a7c1d625b38340e7f58b1f34edcaa0be5
tier: tenant
tenant: acme
key-id: d5736f92328360ef
time: 2026-12-01T16:38:51Z
signature: owhCKdvHkeRoE+0ORmHxHWwEKAuXkgnFx2gmdQwpNuxRbTt0Y3L3VthxrP7K9U/24hTkxxoPb9Yv4bC51X4mAA==
