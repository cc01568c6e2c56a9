"""The services the app depends on and does not run: the client of the Redis the fleet shares (the rate
limiter and the activity counters use it), and the outage log of Redis and of export storage."""
