"""Fetching a program given by URL, safely.

Only http and https; a size limit and a timeout; redirects followed by hand
(at most MAX_REDIRECTS) so each hop is checked again.  Unless private
addresses are allowed, every address a host resolves to must be public: the
check is done by the resolver the connection itself uses, so the address
checked is the address connected to (no DNS rebinding in between).
"""

from __future__ import annotations

import ipaddress
import socket

import aiohttp
from aiohttp.abc import AbstractResolver, ResolveResult
from aiohttp.resolver import ThreadedResolver
from yarl import URL

from hill.errors import FetchError

MAX_REDIRECTS = 5
SCHEMES = ("http", "https")
REFUSED = "refused (the hill's [irc] fetch_allow_private setting allows it)"


def is_url(text: str) -> bool:
    return "://" in text.split(None, 1)[0] if text.strip() else False


def _is_public(address: str) -> bool:
    ip = ipaddress.ip_address(address.split("%", 1)[0])  # drop an IPv6 zone
    if ip.version == 6 and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return ip.is_global


def _literal_address(host: str) -> str | None:
    try:
        return str(ipaddress.ip_address(host.strip("[]")))
    except ValueError:
        return None


class PublicResolver(AbstractResolver):
    """Resolves like the default resolver, but refuses a host any of whose
    addresses is private, loopback, link-local or otherwise not public."""

    def __init__(self) -> None:
        self._resolver = ThreadedResolver()

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[ResolveResult]:
        results = await self._resolver.resolve(host, port, family)
        for result in results:
            if not _is_public(result["host"]):
                raise FetchError(f"{host} is a private address ({result['host']}): {REFUSED}")
        return results

    async def close(self) -> None:
        await self._resolver.close()


def _check_url(url: URL, allow_private: bool) -> None:
    if url.scheme not in SCHEMES:
        raise FetchError(f"only http and https URLs are fetched, not {url.scheme or 'that'}")
    if not url.host:
        raise FetchError("the URL has no host")
    address = _literal_address(url.host)
    # literal addresses never reach the resolver, so they are checked here
    if address is not None and not allow_private and not _is_public(address):
        raise FetchError(f"{url.host} is a private address: {REFUSED}")


async def fetch_program(url: str, *, max_bytes: int, timeout: float, allow_private: bool) -> bytes:
    """The body of `url`, at most `max_bytes` bytes; raises FetchError."""
    try:
        target = URL(url)
    except ValueError:
        raise FetchError("that is not a valid URL") from None
    resolver = None if allow_private else PublicResolver()
    connector = aiohttp.TCPConnector(resolver=resolver, force_close=True)
    limits = aiohttp.ClientTimeout(total=timeout)
    try:
        async with aiohttp.ClientSession(connector=connector, timeout=limits) as session:
            for _ in range(MAX_REDIRECTS + 1):
                _check_url(target, allow_private)
                async with session.get(target, allow_redirects=False) as response:
                    if response.status in (301, 302, 303, 307, 308):
                        location = response.headers.get("Location", "")
                        target = target.join(URL(location))
                        continue
                    if response.status != 200:
                        raise FetchError(f"the URL answered {response.status} {response.reason}")
                    return await _read_limited(response, max_bytes)
            raise FetchError(f"more than {MAX_REDIRECTS} redirects")
    except FetchError:
        raise
    except TimeoutError:
        raise FetchError(f"the URL took more than {timeout:g} s") from None
    except aiohttp.ClientConnectorError as error:
        cause = error.os_error
        if isinstance(cause, FetchError):  # raised by PublicResolver
            raise cause from None
        raise FetchError(f"cannot connect to {target.host}: {cause.strerror or cause}") from None
    except (aiohttp.ClientError, ValueError) as error:
        raise FetchError(f"cannot fetch the URL: {error}") from None


async def _read_limited(response: aiohttp.ClientResponse, max_bytes: int) -> bytes:
    too_large = FetchError(f"the program is larger than {max_bytes} bytes")
    if (response.content_length or 0) > max_bytes:
        raise too_large
    body = bytearray()
    async for chunk in response.content.iter_chunked(65536):
        body += chunk
        if len(body) > max_bytes:
            raise too_large
    return bytes(body)
