"""Storage tests run against a real SeaweedFS: the fixtures are in tests/seaweed.py."""
