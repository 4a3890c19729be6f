"""What the tests share (imported as `support.NAME`; pytest puts tests/ on
the path): the reference data, a bot on a real IRC server and its process,
IRC clients and servers, a Dask cluster, hills for the ladder and the web,
an HTTP server, and a reference interpreter of BF Joust."""
