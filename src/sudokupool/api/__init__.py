"""The HTTP front: routes, endpoints, errors, CORS, client address, content negotiation, OpenAPI."""
