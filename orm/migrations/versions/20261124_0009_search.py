"""search: full-text vectors kept by PostgreSQL (shouts, comments) and trigram indexes on authors

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-24 18:10:00

PostgreSQL only (orm/search.py says why and what SQLite does instead):

- `shout.search_config`: the shout's configuration (`discours_search_config(lang)`: Russian, English,
  else `simple`), a column so that the planner knows how many shouts each language has;
- `shout.search_vector`: title (weight A), subtitle and lead (B), body and media captions (D), HTML
  stripped, in the shout's configuration;
  `shout.title_vector`: the title alone, for the tier that ranks title matches first. Both are generated
  columns: the database computes them on every insert and update, so no write path can forget them.
- `reaction.body_vector`: a comment's text in the Russian configuration (which stems Latin words with the
  English stemmer too).
- GIN indexes on the three, and trigram (pg_trgm) GIN indexes on author name, slug and bio.
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = '0009'
down_revision: str | None = '0008'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# Immutable (the generated columns need it) and inlined by the planner: plain SQL functions.
FUNCTIONS = [
    """CREATE FUNCTION discours_search_config(lang text) RETURNS regconfig
       LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
         SELECT CASE lower(coalesce(lang, ''))
           WHEN 'ru' THEN 'russian'::regconfig WHEN 'en' THEN 'english'::regconfig ELSE 'simple'::regconfig END
       $$""",
    # tags out, entities out (&nbsp; &#171; ...): what a reader sees of the text
    """CREATE FUNCTION discours_plain_text(html text) RETURNS text
       LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
         SELECT regexp_replace(regexp_replace(coalesce(html, ''), '<[^>]*>', ' ', 'g'),
                               '&#?[a-zA-Z0-9]+;', ' ', 'g')
       $$""",
    # the captions of a shout's media: each item's title and body
    """CREATE FUNCTION discours_media_text(media json) RETURNS text
       LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
         SELECT coalesce(string_agg(concat_ws(' ', item ->> 'title', item ->> 'body'), ' '), '')
         FROM jsonb_array_elements(CASE WHEN json_typeof(media) = 'array' THEN media::jsonb ELSE '[]'::jsonb END)
              AS item
       $$""",
]

SHOUT_VECTOR = """
    setweight(to_tsvector(discours_search_config(lang), discours_plain_text(title)), 'A')
    || setweight(to_tsvector(discours_search_config(lang),
                             discours_plain_text(subtitle) || ' ' || discours_plain_text(lead)), 'B')
    || setweight(to_tsvector(discours_search_config(lang),
                             discours_plain_text(body) || ' ' || discours_media_text(media)), 'D')
"""


def upgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    op.execute("CREATE EXTENSION IF NOT EXISTS pg_trgm")
    for function in FUNCTIONS:
        op.execute(function)
    # the configuration as a column of its own: the planner has statistics on it (how many shouts are in
    # each language), where it would guess about the function's result
    op.execute("ALTER TABLE shout ADD COLUMN search_config regconfig GENERATED ALWAYS AS "
               "(discours_search_config(lang)) STORED")
    op.execute("ALTER TABLE shout ADD COLUMN title_vector tsvector GENERATED ALWAYS AS "
               "(to_tsvector(discours_search_config(lang), discours_plain_text(title))) STORED")
    op.execute(f"ALTER TABLE shout ADD COLUMN search_vector tsvector GENERATED ALWAYS AS ({SHOUT_VECTOR}) STORED")
    op.execute("ALTER TABLE reaction ADD COLUMN body_vector tsvector GENERATED ALWAYS AS "
               "(to_tsvector('russian'::regconfig, discours_plain_text(body))) STORED")
    op.execute("CREATE INDEX ix_shout_search_vector ON shout USING gin (search_vector)")
    op.execute("CREATE INDEX ix_shout_title_vector ON shout USING gin (title_vector)")
    op.execute("CREATE INDEX ix_reaction_body_vector ON reaction USING gin (body_vector)")
    for column in ("name", "slug", "bio"):
        op.execute(f"CREATE INDEX ix_author_{column}_trgm ON author USING gin ({column} gin_trgm_ops)")


def downgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    for column in ("name", "slug", "bio"):
        op.execute(f"DROP INDEX ix_author_{column}_trgm")
    op.execute("ALTER TABLE reaction DROP COLUMN body_vector")  # its index goes with it
    op.execute("ALTER TABLE shout DROP COLUMN search_vector")
    op.execute("ALTER TABLE shout DROP COLUMN title_vector")
    op.execute("ALTER TABLE shout DROP COLUMN search_config")
    for function in ("discours_media_text(json)", "discours_plain_text(text)", "discours_search_config(text)"):
        op.execute(f"DROP FUNCTION {function}")
    # pg_trgm stays: other schemas of the database may use it, and it holds no data of ours
