skillrun-statement/1
name: hello
version: 1.0
digest: sha256:b9140aa54fdae3467edf4f1915c6f40a7c1d625b38340e7f58b1f34edcaa0be5
tier: official
key-id: 12b851f6e5c8878a
time: 2026-11-30T05:57:05Z
signature: 7blGeEDZZIPnTFU8MqXKnI17jnF/GEUEPOBxI4U9NIVkgDcyK4efmqp1q68qPEJs5sUP3FrVaXDVykUEMwQeDA==
