-- The tables the SQLAlchemy models of the Discours backend create: github.com/Discours/discours-backend-next,
-- branch dev, commit 8cd0c8ea4c656dd014d3b72d88e675e6afbd064e (2025-02-19), the newest of its public history.
-- Its models were imported as they are (their `services/db.py` Base), `Base.metadata.create_all` ran on an
-- empty PostgreSQL 15 database, and this is `pg_dump --schema-only --no-owner --no-privileges` of it, with
-- pg_dump's `\restrict` lines (a random key for psql) left out. Server defaults its models take at import
-- (`notification.created_at`) hold the commit's time. Its start (`services/schema.py create_all_tables`)
-- makes 17 of these tables, identically; `invite`, `collection`, `shout_collection` and `author_bookmark`
-- come of a full create_all (its tests' and Alembic's). Nothing else of Discours is in this project.

--
-- PostgreSQL database dump
--


-- Dumped from database version 15.20 (Debian 15.20-0+deb12u1)
-- Dumped by pg_dump version 15.20 (Debian 15.20-0+deb12u1)

SET statement_timeout = 0;
SET lock_timeout = 0;
SET idle_in_transaction_session_timeout = 0;
SET client_encoding = 'UTF8';
SET standard_conforming_strings = on;
SELECT pg_catalog.set_config('search_path', '', false);
SET check_function_bodies = false;
SET xmloption = content;
SET client_min_messages = warning;
SET row_security = off;

SET default_tablespace = '';

SET default_table_access_method = heap;

--
-- Name: author; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.author (
    "user" character varying,
    name character varying,
    slug character varying,
    bio character varying,
    about character varying,
    pic character varying,
    links json,
    created_at integer NOT NULL,
    last_seen integer NOT NULL,
    updated_at integer NOT NULL,
    deleted_at integer,
    id integer NOT NULL
);


--
-- Name: COLUMN author.name; Type: COMMENT; Schema: public; Owner: -
--

COMMENT ON COLUMN public.author.name IS 'Display name';


--
-- Name: COLUMN author.slug; Type: COMMENT; Schema: public; Owner: -
--

COMMENT ON COLUMN public.author.slug IS 'Author''s slug';


--
-- Name: COLUMN author.bio; Type: COMMENT; Schema: public; Owner: -
--

COMMENT ON COLUMN public.author.bio IS 'Bio';


--
-- Name: COLUMN author.about; Type: COMMENT; Schema: public; Owner: -
--

COMMENT ON COLUMN public.author.about IS 'About';


--
-- Name: COLUMN author.pic; Type: COMMENT; Schema: public; Owner: -
--

COMMENT ON COLUMN public.author.pic IS 'Picture';


--
-- Name: COLUMN author.links; Type: COMMENT; Schema: public; Owner: -
--

COMMENT ON COLUMN public.author.links IS 'Links';


--
-- Name: COLUMN author.deleted_at; Type: COMMENT; Schema: public; Owner: -
--

COMMENT ON COLUMN public.author.deleted_at IS 'Deleted at';


--
-- Name: author_bookmark; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.author_bookmark (
    author integer NOT NULL,
    shout integer NOT NULL
);


--
-- Name: author_follower; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.author_follower (
    follower integer NOT NULL,
    author integer NOT NULL,
    created_at integer NOT NULL,
    auto boolean NOT NULL
);


--
-- Name: author_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.author_id_seq
    AS integer
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: author_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.author_id_seq OWNED BY public.author.id;


--
-- Name: author_rating; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.author_rating (
    rater integer NOT NULL,
    author integer NOT NULL,
    plus boolean
);


--
-- Name: collection; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.collection (
    slug character varying,
    title character varying NOT NULL,
    body character varying,
    pic character varying,
    created_at integer,
    created_by integer,
    published_at integer,
    id integer NOT NULL
);


--
-- Name: COLUMN collection.title; Type: COMMENT; Schema: public; Owner: -
--

COMMENT ON COLUMN public.collection.title IS 'Title';


--
-- Name: COLUMN collection.body; Type: COMMENT; Schema: public; Owner: -
--

COMMENT ON COLUMN public.collection.body IS 'Body';


--
-- Name: COLUMN collection.pic; Type: COMMENT; Schema: public; Owner: -
--

COMMENT ON COLUMN public.collection.pic IS 'Picture';


--
-- Name: COLUMN collection.created_by; Type: COMMENT; Schema: public; Owner: -
--

COMMENT ON COLUMN public.collection.created_by IS 'Created By';


--
-- Name: collection_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.collection_id_seq
    AS integer
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: collection_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.collection_id_seq OWNED BY public.collection.id;


--
-- Name: community; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.community (
    name character varying NOT NULL,
    slug character varying NOT NULL,
    "desc" character varying NOT NULL,
    pic character varying NOT NULL,
    created_at integer NOT NULL,
    created_by integer NOT NULL,
    id integer NOT NULL
);


--
-- Name: community_author; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.community_author (
    author integer NOT NULL,
    community integer NOT NULL,
    joined_at integer NOT NULL,
    roles text,
    id integer NOT NULL,
    community_id integer,
    author_id integer
);


--
-- Name: COLUMN community_author.roles; Type: COMMENT; Schema: public; Owner: -
--

COMMENT ON COLUMN public.community_author.roles IS 'Roles (comma-separated)';


--
-- Name: community_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.community_id_seq
    AS integer
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: community_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.community_id_seq OWNED BY public.community.id;


--
-- Name: draft; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.draft (
    created_at integer NOT NULL,
    created_by integer NOT NULL,
    layout character varying,
    slug character varying,
    title character varying,
    subtitle character varying,
    lead character varying,
    description character varying,
    body character varying NOT NULL,
    media json,
    cover character varying,
    cover_caption character varying,
    lang character varying NOT NULL,
    seo character varying,
    updated_at integer,
    deleted_at integer,
    updated_by integer,
    deleted_by integer,
    id integer NOT NULL
);


--
-- Name: COLUMN draft.body; Type: COMMENT; Schema: public; Owner: -
--

COMMENT ON COLUMN public.draft.body IS 'Body';


--
-- Name: COLUMN draft.cover; Type: COMMENT; Schema: public; Owner: -
--

COMMENT ON COLUMN public.draft.cover IS 'Cover image url';


--
-- Name: COLUMN draft.cover_caption; Type: COMMENT; Schema: public; Owner: -
--

COMMENT ON COLUMN public.draft.cover_caption IS 'Cover image alt caption';


--
-- Name: COLUMN draft.lang; Type: COMMENT; Schema: public; Owner: -
--

COMMENT ON COLUMN public.draft.lang IS 'Language';


--
-- Name: draft_author; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.draft_author (
    shout integer NOT NULL,
    author integer NOT NULL,
    caption character varying
);


--
-- Name: draft_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.draft_id_seq
    AS integer
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: draft_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.draft_id_seq OWNED BY public.draft.id;


--
-- Name: draft_topic; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.draft_topic (
    shout integer NOT NULL,
    topic integer NOT NULL,
    main boolean
);


--
-- Name: invite; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.invite (
    inviter_id integer NOT NULL,
    author_id integer NOT NULL,
    shout_id integer NOT NULL,
    status character varying,
    id integer NOT NULL
);


--
-- Name: notification; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.notification (
    id integer NOT NULL,
    created_at integer DEFAULT 1739913822,
    entity character varying NOT NULL,
    action character varying NOT NULL,
    payload json
);


--
-- Name: notification_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.notification_id_seq
    AS integer
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: notification_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.notification_id_seq OWNED BY public.notification.id;


--
-- Name: notification_seen; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.notification_seen (
    viewer integer NOT NULL,
    notification integer NOT NULL,
    id integer NOT NULL
);


--
-- Name: reaction; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.reaction (
    body character varying,
    created_at integer NOT NULL,
    updated_at integer,
    deleted_at integer,
    deleted_by integer,
    reply_to integer,
    quote character varying,
    shout integer NOT NULL,
    created_by integer NOT NULL,
    kind character varying NOT NULL,
    oid character varying,
    id integer NOT NULL
);


--
-- Name: COLUMN reaction.body; Type: COMMENT; Schema: public; Owner: -
--

COMMENT ON COLUMN public.reaction.body IS 'Reaction Body';


--
-- Name: COLUMN reaction.updated_at; Type: COMMENT; Schema: public; Owner: -
--

COMMENT ON COLUMN public.reaction.updated_at IS 'Updated at';


--
-- Name: COLUMN reaction.deleted_at; Type: COMMENT; Schema: public; Owner: -
--

COMMENT ON COLUMN public.reaction.deleted_at IS 'Deleted at';


--
-- Name: COLUMN reaction.quote; Type: COMMENT; Schema: public; Owner: -
--

COMMENT ON COLUMN public.reaction.quote IS 'Original quoted text';


--
-- Name: reaction_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.reaction_id_seq
    AS integer
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: reaction_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.reaction_id_seq OWNED BY public.reaction.id;


--
-- Name: shout; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.shout (
    created_at integer NOT NULL,
    updated_at integer,
    published_at integer,
    featured_at integer,
    deleted_at integer,
    created_by integer NOT NULL,
    updated_by integer,
    deleted_by integer,
    community integer NOT NULL,
    body character varying NOT NULL,
    slug character varying,
    cover character varying,
    cover_caption character varying,
    lead character varying,
    description character varying,
    title character varying NOT NULL,
    subtitle character varying,
    layout character varying NOT NULL,
    media json,
    lang character varying NOT NULL,
    version_of integer,
    oid character varying,
    seo character varying,
    draft integer,
    id integer NOT NULL
);


--
-- Name: COLUMN shout.body; Type: COMMENT; Schema: public; Owner: -
--

COMMENT ON COLUMN public.shout.body IS 'Body';


--
-- Name: COLUMN shout.cover; Type: COMMENT; Schema: public; Owner: -
--

COMMENT ON COLUMN public.shout.cover IS 'Cover image url';


--
-- Name: COLUMN shout.cover_caption; Type: COMMENT; Schema: public; Owner: -
--

COMMENT ON COLUMN public.shout.cover_caption IS 'Cover image alt caption';


--
-- Name: COLUMN shout.lang; Type: COMMENT; Schema: public; Owner: -
--

COMMENT ON COLUMN public.shout.lang IS 'Language';


--
-- Name: shout_author; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.shout_author (
    shout integer NOT NULL,
    author integer NOT NULL,
    caption character varying
);


--
-- Name: shout_collection; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.shout_collection (
    shout integer NOT NULL,
    collection integer NOT NULL
);


--
-- Name: shout_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.shout_id_seq
    AS integer
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: shout_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.shout_id_seq OWNED BY public.shout.id;


--
-- Name: shout_reactions_followers; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.shout_reactions_followers (
    follower integer NOT NULL,
    shout integer NOT NULL,
    auto boolean NOT NULL,
    created_at integer NOT NULL,
    deleted_at integer
);


--
-- Name: shout_topic; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.shout_topic (
    shout integer NOT NULL,
    topic integer NOT NULL,
    main boolean
);


--
-- Name: topic; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.topic (
    slug character varying,
    title character varying NOT NULL,
    body character varying,
    pic character varying,
    community integer,
    oid character varying,
    parent_ids json,
    id integer NOT NULL
);


--
-- Name: COLUMN topic.title; Type: COMMENT; Schema: public; Owner: -
--

COMMENT ON COLUMN public.topic.title IS 'Title';


--
-- Name: COLUMN topic.body; Type: COMMENT; Schema: public; Owner: -
--

COMMENT ON COLUMN public.topic.body IS 'Body';


--
-- Name: COLUMN topic.pic; Type: COMMENT; Schema: public; Owner: -
--

COMMENT ON COLUMN public.topic.pic IS 'Picture';


--
-- Name: COLUMN topic.oid; Type: COMMENT; Schema: public; Owner: -
--

COMMENT ON COLUMN public.topic.oid IS 'Old ID';


--
-- Name: COLUMN topic.parent_ids; Type: COMMENT; Schema: public; Owner: -
--

COMMENT ON COLUMN public.topic.parent_ids IS 'Parent Topic IDs';


--
-- Name: topic_followers; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.topic_followers (
    follower integer NOT NULL,
    topic integer NOT NULL,
    created_at integer NOT NULL,
    auto boolean NOT NULL
);


--
-- Name: topic_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.topic_id_seq
    AS integer
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: topic_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.topic_id_seq OWNED BY public.topic.id;


--
-- Name: author id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.author ALTER COLUMN id SET DEFAULT nextval('public.author_id_seq'::regclass);


--
-- Name: collection id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.collection ALTER COLUMN id SET DEFAULT nextval('public.collection_id_seq'::regclass);


--
-- Name: community id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.community ALTER COLUMN id SET DEFAULT nextval('public.community_id_seq'::regclass);


--
-- Name: draft id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.draft ALTER COLUMN id SET DEFAULT nextval('public.draft_id_seq'::regclass);


--
-- Name: notification id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.notification ALTER COLUMN id SET DEFAULT nextval('public.notification_id_seq'::regclass);


--
-- Name: reaction id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.reaction ALTER COLUMN id SET DEFAULT nextval('public.reaction_id_seq'::regclass);


--
-- Name: shout id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.shout ALTER COLUMN id SET DEFAULT nextval('public.shout_id_seq'::regclass);


--
-- Name: topic id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.topic ALTER COLUMN id SET DEFAULT nextval('public.topic_id_seq'::regclass);


--
-- Name: author_bookmark author_bookmark_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.author_bookmark
    ADD CONSTRAINT author_bookmark_pkey PRIMARY KEY (author, shout);


--
-- Name: author_follower author_follower_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.author_follower
    ADD CONSTRAINT author_follower_pkey PRIMARY KEY (follower, author);


--
-- Name: author author_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.author
    ADD CONSTRAINT author_pkey PRIMARY KEY (id);


--
-- Name: author_rating author_rating_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.author_rating
    ADD CONSTRAINT author_rating_pkey PRIMARY KEY (rater, author);


--
-- Name: author author_slug_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.author
    ADD CONSTRAINT author_slug_key UNIQUE (slug);


--
-- Name: collection collection_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.collection
    ADD CONSTRAINT collection_pkey PRIMARY KEY (id);


--
-- Name: collection collection_slug_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.collection
    ADD CONSTRAINT collection_slug_key UNIQUE (slug);


--
-- Name: community_author community_author_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.community_author
    ADD CONSTRAINT community_author_pkey PRIMARY KEY (author, community, id);


--
-- Name: community community_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.community
    ADD CONSTRAINT community_pkey PRIMARY KEY (id);


--
-- Name: community community_slug_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.community
    ADD CONSTRAINT community_slug_key UNIQUE (slug);


--
-- Name: draft_author draft_author_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.draft_author
    ADD CONSTRAINT draft_author_pkey PRIMARY KEY (shout, author);


--
-- Name: draft draft_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.draft
    ADD CONSTRAINT draft_pkey PRIMARY KEY (id);


--
-- Name: draft draft_slug_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.draft
    ADD CONSTRAINT draft_slug_key UNIQUE (slug);


--
-- Name: draft_topic draft_topic_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.draft_topic
    ADD CONSTRAINT draft_topic_pkey PRIMARY KEY (shout, topic);


--
-- Name: invite invite_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.invite
    ADD CONSTRAINT invite_pkey PRIMARY KEY (inviter_id, author_id, shout_id, id);


--
-- Name: notification notification_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.notification
    ADD CONSTRAINT notification_pkey PRIMARY KEY (id);


--
-- Name: notification_seen notification_seen_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.notification_seen
    ADD CONSTRAINT notification_seen_pkey PRIMARY KEY (viewer, notification, id);


--
-- Name: reaction reaction_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.reaction
    ADD CONSTRAINT reaction_pkey PRIMARY KEY (id);


--
-- Name: shout_author shout_author_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.shout_author
    ADD CONSTRAINT shout_author_pkey PRIMARY KEY (shout, author);


--
-- Name: shout_collection shout_collection_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.shout_collection
    ADD CONSTRAINT shout_collection_pkey PRIMARY KEY (shout, collection);


--
-- Name: shout shout_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.shout
    ADD CONSTRAINT shout_pkey PRIMARY KEY (id);


--
-- Name: shout_reactions_followers shout_reactions_followers_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.shout_reactions_followers
    ADD CONSTRAINT shout_reactions_followers_pkey PRIMARY KEY (follower, shout);


--
-- Name: shout shout_slug_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.shout
    ADD CONSTRAINT shout_slug_key UNIQUE (slug);


--
-- Name: shout_topic shout_topic_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.shout_topic
    ADD CONSTRAINT shout_topic_pkey PRIMARY KEY (shout, topic);


--
-- Name: topic_followers topic_followers_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.topic_followers
    ADD CONSTRAINT topic_followers_pkey PRIMARY KEY (follower, topic);


--
-- Name: topic topic_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.topic
    ADD CONSTRAINT topic_pkey PRIMARY KEY (id);


--
-- Name: topic topic_slug_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.topic
    ADD CONSTRAINT topic_slug_key UNIQUE (slug);


--
-- Name: ix_draft_author_author; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX ix_draft_author_author ON public.draft_author USING btree (author);


--
-- Name: ix_draft_author_shout; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX ix_draft_author_shout ON public.draft_author USING btree (shout);


--
-- Name: ix_draft_deleted_at; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX ix_draft_deleted_at ON public.draft USING btree (deleted_at);


--
-- Name: ix_draft_topic_shout; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX ix_draft_topic_shout ON public.draft_topic USING btree (shout);


--
-- Name: ix_draft_topic_topic; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX ix_draft_topic_topic ON public.draft_topic USING btree (topic);


--
-- Name: ix_draft_updated_at; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX ix_draft_updated_at ON public.draft USING btree (updated_at);


--
-- Name: ix_reaction_created_at; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX ix_reaction_created_at ON public.reaction USING btree (created_at);


--
-- Name: ix_reaction_deleted_at; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX ix_reaction_deleted_at ON public.reaction USING btree (deleted_at);


--
-- Name: ix_reaction_kind; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX ix_reaction_kind ON public.reaction USING btree (kind);


--
-- Name: ix_reaction_shout; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX ix_reaction_shout ON public.reaction USING btree (shout);


--
-- Name: ix_reaction_updated_at; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX ix_reaction_updated_at ON public.reaction USING btree (updated_at);


--
-- Name: ix_shout_author_author; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX ix_shout_author_author ON public.shout_author USING btree (author);


--
-- Name: ix_shout_author_shout; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX ix_shout_author_shout ON public.shout_author USING btree (shout);


--
-- Name: ix_shout_deleted_at; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX ix_shout_deleted_at ON public.shout USING btree (deleted_at);


--
-- Name: ix_shout_featured_at; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX ix_shout_featured_at ON public.shout USING btree (featured_at);


--
-- Name: ix_shout_published_at; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX ix_shout_published_at ON public.shout USING btree (published_at);


--
-- Name: ix_shout_reactions_followers_follower; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX ix_shout_reactions_followers_follower ON public.shout_reactions_followers USING btree (follower);


--
-- Name: ix_shout_reactions_followers_shout; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX ix_shout_reactions_followers_shout ON public.shout_reactions_followers USING btree (shout);


--
-- Name: ix_shout_topic_shout; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX ix_shout_topic_shout ON public.shout_topic USING btree (shout);


--
-- Name: ix_shout_topic_topic; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX ix_shout_topic_topic ON public.shout_topic USING btree (topic);


--
-- Name: ix_shout_updated_at; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX ix_shout_updated_at ON public.shout USING btree (updated_at);


--
-- Name: author_bookmark author_bookmark_author_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.author_bookmark
    ADD CONSTRAINT author_bookmark_author_fkey FOREIGN KEY (author) REFERENCES public.author(id);


--
-- Name: author_bookmark author_bookmark_shout_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.author_bookmark
    ADD CONSTRAINT author_bookmark_shout_fkey FOREIGN KEY (shout) REFERENCES public.shout(id);


--
-- Name: author_follower author_follower_author_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.author_follower
    ADD CONSTRAINT author_follower_author_fkey FOREIGN KEY (author) REFERENCES public.author(id);


--
-- Name: author_follower author_follower_follower_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.author_follower
    ADD CONSTRAINT author_follower_follower_fkey FOREIGN KEY (follower) REFERENCES public.author(id);


--
-- Name: author_rating author_rating_author_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.author_rating
    ADD CONSTRAINT author_rating_author_fkey FOREIGN KEY (author) REFERENCES public.author(id);


--
-- Name: author_rating author_rating_rater_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.author_rating
    ADD CONSTRAINT author_rating_rater_fkey FOREIGN KEY (rater) REFERENCES public.author(id);


--
-- Name: collection collection_created_by_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.collection
    ADD CONSTRAINT collection_created_by_fkey FOREIGN KEY (created_by) REFERENCES public.author(id);


--
-- Name: community_author community_author_author_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.community_author
    ADD CONSTRAINT community_author_author_fkey FOREIGN KEY (author) REFERENCES public.author(id);


--
-- Name: community_author community_author_author_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.community_author
    ADD CONSTRAINT community_author_author_id_fkey FOREIGN KEY (author_id) REFERENCES public.author(id);


--
-- Name: community_author community_author_community_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.community_author
    ADD CONSTRAINT community_author_community_fkey FOREIGN KEY (community) REFERENCES public.community(id);


--
-- Name: community_author community_author_community_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.community_author
    ADD CONSTRAINT community_author_community_id_fkey FOREIGN KEY (community_id) REFERENCES public.community(id);


--
-- Name: community community_created_by_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.community
    ADD CONSTRAINT community_created_by_fkey FOREIGN KEY (created_by) REFERENCES public.author(id);


--
-- Name: draft_author draft_author_author_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.draft_author
    ADD CONSTRAINT draft_author_author_fkey FOREIGN KEY (author) REFERENCES public.author(id);


--
-- Name: draft_author draft_author_shout_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.draft_author
    ADD CONSTRAINT draft_author_shout_fkey FOREIGN KEY (shout) REFERENCES public.draft(id);


--
-- Name: draft draft_created_by_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.draft
    ADD CONSTRAINT draft_created_by_fkey FOREIGN KEY (created_by) REFERENCES public.author(id);


--
-- Name: draft draft_deleted_by_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.draft
    ADD CONSTRAINT draft_deleted_by_fkey FOREIGN KEY (deleted_by) REFERENCES public.author(id);


--
-- Name: draft_topic draft_topic_shout_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.draft_topic
    ADD CONSTRAINT draft_topic_shout_fkey FOREIGN KEY (shout) REFERENCES public.draft(id);


--
-- Name: draft_topic draft_topic_topic_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.draft_topic
    ADD CONSTRAINT draft_topic_topic_fkey FOREIGN KEY (topic) REFERENCES public.topic(id);


--
-- Name: draft draft_updated_by_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.draft
    ADD CONSTRAINT draft_updated_by_fkey FOREIGN KEY (updated_by) REFERENCES public.author(id);


--
-- Name: invite invite_author_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.invite
    ADD CONSTRAINT invite_author_id_fkey FOREIGN KEY (author_id) REFERENCES public.author(id);


--
-- Name: invite invite_inviter_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.invite
    ADD CONSTRAINT invite_inviter_id_fkey FOREIGN KEY (inviter_id) REFERENCES public.author(id);


--
-- Name: invite invite_shout_id_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.invite
    ADD CONSTRAINT invite_shout_id_fkey FOREIGN KEY (shout_id) REFERENCES public.shout(id);


--
-- Name: notification_seen notification_seen_notification_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.notification_seen
    ADD CONSTRAINT notification_seen_notification_fkey FOREIGN KEY (notification) REFERENCES public.notification(id);


--
-- Name: notification_seen notification_seen_viewer_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.notification_seen
    ADD CONSTRAINT notification_seen_viewer_fkey FOREIGN KEY (viewer) REFERENCES public.author(id);


--
-- Name: reaction reaction_created_by_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.reaction
    ADD CONSTRAINT reaction_created_by_fkey FOREIGN KEY (created_by) REFERENCES public.author(id);


--
-- Name: reaction reaction_deleted_by_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.reaction
    ADD CONSTRAINT reaction_deleted_by_fkey FOREIGN KEY (deleted_by) REFERENCES public.author(id);


--
-- Name: reaction reaction_reply_to_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.reaction
    ADD CONSTRAINT reaction_reply_to_fkey FOREIGN KEY (reply_to) REFERENCES public.reaction(id);


--
-- Name: reaction reaction_shout_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.reaction
    ADD CONSTRAINT reaction_shout_fkey FOREIGN KEY (shout) REFERENCES public.shout(id);


--
-- Name: shout_author shout_author_author_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.shout_author
    ADD CONSTRAINT shout_author_author_fkey FOREIGN KEY (author) REFERENCES public.author(id);


--
-- Name: shout_author shout_author_shout_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.shout_author
    ADD CONSTRAINT shout_author_shout_fkey FOREIGN KEY (shout) REFERENCES public.shout(id);


--
-- Name: shout_collection shout_collection_collection_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.shout_collection
    ADD CONSTRAINT shout_collection_collection_fkey FOREIGN KEY (collection) REFERENCES public.collection(id);


--
-- Name: shout_collection shout_collection_shout_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.shout_collection
    ADD CONSTRAINT shout_collection_shout_fkey FOREIGN KEY (shout) REFERENCES public.shout(id);


--
-- Name: shout shout_community_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.shout
    ADD CONSTRAINT shout_community_fkey FOREIGN KEY (community) REFERENCES public.community(id);


--
-- Name: shout shout_created_by_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.shout
    ADD CONSTRAINT shout_created_by_fkey FOREIGN KEY (created_by) REFERENCES public.author(id);


--
-- Name: shout shout_deleted_by_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.shout
    ADD CONSTRAINT shout_deleted_by_fkey FOREIGN KEY (deleted_by) REFERENCES public.author(id);


--
-- Name: shout shout_draft_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.shout
    ADD CONSTRAINT shout_draft_fkey FOREIGN KEY (draft) REFERENCES public.draft(id);


--
-- Name: shout_reactions_followers shout_reactions_followers_follower_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.shout_reactions_followers
    ADD CONSTRAINT shout_reactions_followers_follower_fkey FOREIGN KEY (follower) REFERENCES public.author(id);


--
-- Name: shout_reactions_followers shout_reactions_followers_shout_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.shout_reactions_followers
    ADD CONSTRAINT shout_reactions_followers_shout_fkey FOREIGN KEY (shout) REFERENCES public.shout(id);


--
-- Name: shout_topic shout_topic_shout_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.shout_topic
    ADD CONSTRAINT shout_topic_shout_fkey FOREIGN KEY (shout) REFERENCES public.shout(id);


--
-- Name: shout_topic shout_topic_topic_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.shout_topic
    ADD CONSTRAINT shout_topic_topic_fkey FOREIGN KEY (topic) REFERENCES public.topic(id);


--
-- Name: shout shout_updated_by_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.shout
    ADD CONSTRAINT shout_updated_by_fkey FOREIGN KEY (updated_by) REFERENCES public.author(id);


--
-- Name: shout shout_version_of_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.shout
    ADD CONSTRAINT shout_version_of_fkey FOREIGN KEY (version_of) REFERENCES public.shout(id);


--
-- Name: topic topic_community_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.topic
    ADD CONSTRAINT topic_community_fkey FOREIGN KEY (community) REFERENCES public.community(id);


--
-- Name: topic_followers topic_followers_follower_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.topic_followers
    ADD CONSTRAINT topic_followers_follower_fkey FOREIGN KEY (follower) REFERENCES public.author(id);


--
-- Name: topic_followers topic_followers_topic_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.topic_followers
    ADD CONSTRAINT topic_followers_topic_fkey FOREIGN KEY (topic) REFERENCES public.topic(id);


--
-- PostgreSQL database dump complete
--
