"""What the test suite and the bench both start: the service and other servers on free loopback ports
(``servers``), Valkey and SeaweedFS (``stores``), and the service's container image (``containers``). The suite's
fixtures (tests/) and the bench's commands (bench/) import it; it imports neither."""
