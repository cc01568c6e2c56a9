"""Operational metrics in the Prometheus text format, on their own port (``SUDOKUPOOL_METRICS_PORT``).

``requests`` holds the tally the request path counts into; ``exporter`` turns the app's counters and state
into prometheus-client's metrics; ``endpoint`` serves them; ``workers`` prepares a server's workers to
share them (the launcher calls it before it starts them). docs/operations.md lists every metric.
"""
