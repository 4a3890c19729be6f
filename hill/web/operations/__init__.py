"""What the operator and the API's clients read: `/healthz` and `/metrics`
(health.py: the writer, the IRC link, the request book, and Prometheus
counters of the web's answers) and the JSON API's OpenAPI description,
`/api/openapi.json` (openapi.py).

May import: hill.rules, hill.store (its read side), the web's core
(hill.web.builds, hill.web.urls), aiohttp, prometheus_client.  No other
concern of the web.
"""
