"""Serving one file of a revision: the headers huggingface_hub reads, Range requests, pacing, cuts.

No redirect is made (the real Hub sends LFS files to a CDN, but the client reads
the same X-Linked-* headers either way) and nothing advertises Xet, so the
client takes its plain HTTP download path.
"""

from __future__ import annotations

import re
from urllib.parse import quote

from aiohttp import web

from .bandwidth import SharedLink
from .fixtures import FixtureFile, FixtureRevision

_RANGE = re.compile(r"^bytes=(\d*)-(\d*)$")
_PIECE = 1 << 16


def file_headers(f: FixtureFile, revision: FixtureRevision, byte_scale: int) -> dict[str, str]:
    """What HEAD and GET of /resolve/ carry, whatever part of the body follows."""
    name = f.path.rsplit("/", 1)[-1]
    headers = {
        "X-Repo-Commit": revision.sha,
        "Accept-Ranges": "bytes",
        "Content-Type": "application/octet-stream" if f.is_lfs else "text/plain; charset=utf-8",
        "Content-Disposition": f"inline; filename*=UTF-8''{quote(name)}; filename=\"{name}\"",
        "ETag": f'"{f.blob_id(byte_scale)}"',
    }
    if f.is_lfs:
        # The stored size: that is what the body holds and what the client checks it against.
        headers["X-Linked-Etag"] = f'"{f.sha256(byte_scale)}"'
        headers["X-Linked-Size"] = str(f.stored_size(byte_scale))
    return headers


def parse_range(header: str | None, total: int) -> tuple[int, int] | None | str:
    """(start, end inclusive) for a satisfiable `Range`, None without one, "unsatisfiable" otherwise."""
    if header is None:
        return None
    m = _RANGE.match(header.strip())
    if m is None or (not m.group(1) and not m.group(2)):
        return None  # a form this server does not understand is ignored, as RFC 9110 allows
    if not m.group(1):  # suffix range: the last N bytes
        n = int(m.group(2))
        return (max(total - n, 0), total - 1) if n > 0 and total > 0 else "unsatisfiable"
    start = int(m.group(1))
    end = int(m.group(2)) if m.group(2) else total - 1
    if start >= total or end < start:
        return "unsatisfiable"
    return start, min(end, total - 1)


async def send_file(
    request: web.Request,
    f: FixtureFile,
    revision: FixtureRevision,
    *,
    byte_scale: int,
    link: SharedLink,
    cut_after_fraction: float | None,
) -> web.StreamResponse:
    """Answer HEAD or GET of one file. `cut_after_fraction`: drop the connection after that share of the body."""
    total = f.stored_size(byte_scale)
    headers = file_headers(f, revision, byte_scale)
    wanted = parse_range(request.headers.get("Range"), total) if request.method == "GET" else None
    if wanted == "unsatisfiable":
        headers["Content-Range"] = f"bytes */{total}"
        return web.Response(status=416, headers=headers)
    if isinstance(wanted, tuple):
        start, end = wanted
        status = 206
        headers["Content-Range"] = f"bytes {start}-{end}/{total}"
    else:
        start, end, status = 0, total - 1, 200
    length = end - start + 1 if total else 0

    response = web.StreamResponse(status=status, headers=headers)
    response.content_length = length
    if request.method == "HEAD":
        await response.prepare(request)
        return response

    await response.prepare(request)
    cut_at = int(length * cut_after_fraction) if cut_after_fraction is not None else None
    sent = 0
    for piece in f.iter_stored_bytes(byte_scale, start=start, chunk=_PIECE):
        piece = piece[: length - sent]
        if cut_at is not None and sent + len(piece) >= cut_at:
            piece = piece[: cut_at - sent]
            await link.send(len(piece))
            await response.write(piece)
            # Drop the connection mid-body, as a flaky link does: the client sees
            # fewer bytes than Content-Length announced. aiohttp finds the
            # transport closed and ends the exchange without finishing the body.
            if request.transport is not None:
                request.transport.close()
            return response
        await link.send(len(piece))
        await response.write(piece)
        sent += len(piece)
        if sent >= length:
            break
    await response.write_eof()
    return response
