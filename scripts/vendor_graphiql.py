"""Copy the GraphiQL page's scripts and styles into app/static/graphiql, so /graphql works offline.

Strawberry's GraphiQL page (strawberry/static/graphiql.html) loads pinned files from unpkg with Subresource
Integrity hashes. This script takes the same files from the npm registry's package tarballs, checks each
against the page's own hash and writes them to app/static/graphiql/<package>@<version>/<path>; the server
serves the page with unpkg's address replaced by its own (app/http/graphiql.py), and the browser checks the same
hashes. Run it again after upgrading Strawberry:

    .venv/bin/python scripts/vendor_graphiql.py
"""

from __future__ import annotations

import base64
import hashlib
import io
import re
import shutil
import tarfile
import urllib.request
from pathlib import Path

from strawberry.http.ides import get_graphql_ide_html

TARGET = Path(__file__).resolve().parent.parent / "app" / "static" / "graphiql"
ASSET = re.compile(r'(?:src|href)="https://unpkg\.com/((?:@[^/]+/)?[^@/]+)@([^/]+)/([^"]+)"\s+integrity="([^"]+)"')


def main() -> None:
    page = get_graphql_ide_html(graphql_ide="graphiql")
    assets = ASSET.findall(page)
    assert assets, "no unpkg assets found in Strawberry's GraphiQL page"
    shutil.rmtree(TARGET, ignore_errors=True)
    for package, version, path, integrity in assets:
        tarball = f"https://registry.npmjs.org/{package}/-/{package.split('/')[-1]}-{version}.tgz"
        with urllib.request.urlopen(tarball, timeout=60) as response:
            archive = tarfile.open(fileobj=io.BytesIO(response.read()))
        member = archive.extractfile(f"package/{path}")
        assert member is not None, (package, path)
        content = member.read()
        algorithm, _, expected = integrity.partition("-")
        actual = base64.b64encode(hashlib.new(algorithm, content).digest()).decode()
        assert actual == expected, f"{package}@{version}/{path}: integrity {actual} is not the page's {expected}"
        out = TARGET / f"{package}@{version}" / path
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_bytes(content)
        print(f"{package}@{version}/{path}: {len(content):,} bytes, {integrity[:20]}… checked")
    (TARGET / "ORIGIN.md").write_text(
        "Written by scripts/vendor_graphiql.py: the files Strawberry's GraphiQL page loads from unpkg, taken\n"
        "from the npm registry's tarballs and checked against the page's Subresource Integrity hashes.\n"
        "Licences: GraphiQL and its explorer plugin (MIT, GraphQL Contributors), React and ReactDOM (MIT,\n"
        "Meta Platforms), js-cookie (MIT, Klaus Hartl and Fagner Brack).\n")


if __name__ == "__main__":
    main()
