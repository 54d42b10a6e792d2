# declares input types (test-policy: a profile line overrides it)
inputs-types text/plain
