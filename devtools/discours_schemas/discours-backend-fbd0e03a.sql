-- The tables the SQLAlchemy models of the Discours backend create: github.com/Discours/discours-backend,
-- branch main, commit fbd0e03a3396ec5d1e8c5a0cc658467cec566a6c (2024-02-23), the newest commit of the
-- repository's snapshot that can be fetched whole: the 2021-2024 backend (`user`, `user_role`, camelCase
-- times) that `discours-backend-next` replaced. Its models were imported as they are (`base/orm.py`),
-- `orm.init_tables`' `Base.metadata.create_all` ran on an empty PostgreSQL 15 database (its rows of roles
-- and resources left out), and this is `pg_dump --schema-only --no-owner --no-privileges` of it, with
-- pg_dump's `\restrict` lines left out. Nothing else of Discours is in this project.

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

--
-- Name: notificationtype; Type: TYPE; Schema: public; Owner: -
--

CREATE TYPE public.notificationtype AS ENUM (
    'NEW_COMMENT',
    'NEW_REPLY'
);


--
-- Name: reactionkind; Type: TYPE; Schema: public; Owner: -
--

CREATE TYPE public.reactionkind AS ENUM (
    'AGREE',
    'DISAGREE',
    'PROOF',
    'DISPROOF',
    'ASK',
    'PROPOSE',
    'QUOTE',
    'COMMENT',
    'ACCEPT',
    'REJECT',
    'LIKE',
    'DISLIKE',
    'REMARK',
    'FOOTNOTE'
);


SET default_tablespace = '';

SET default_table_access_method = heap;

--
-- Name: author_follower; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.author_follower (
    follower integer NOT NULL,
    author integer NOT NULL,
    "createdAt" timestamp with time zone DEFAULT now() NOT NULL,
    auto boolean NOT NULL
);


--
-- Name: COLUMN author_follower."createdAt"; Type: COMMENT; Schema: public; Owner: -
--

COMMENT ON COLUMN public.author_follower."createdAt" IS 'Created at';


--
-- Name: community; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.community (
    name character varying NOT NULL,
    slug character varying NOT NULL,
    "desc" character varying NOT NULL,
    pic character varying NOT NULL,
    "createdAt" timestamp with time zone DEFAULT now() NOT NULL,
    id integer NOT NULL
);


--
-- Name: COLUMN community.name; Type: COMMENT; Schema: public; Owner: -
--

COMMENT ON COLUMN public.community.name IS 'Name';


--
-- Name: COLUMN community.slug; Type: COMMENT; Schema: public; Owner: -
--

COMMENT ON COLUMN public.community.slug IS 'Slug';


--
-- Name: COLUMN community."createdAt"; Type: COMMENT; Schema: public; Owner: -
--

COMMENT ON COLUMN public.community."createdAt" IS 'Created at';


--
-- Name: community_followers; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.community_followers (
    follower integer NOT NULL,
    community integer NOT NULL,
    "joinedAt" timestamp with time zone DEFAULT now() NOT NULL
);


--
-- Name: COLUMN community_followers."joinedAt"; Type: COMMENT; Schema: public; Owner: -
--

COMMENT ON COLUMN public.community_followers."joinedAt" IS 'Created at';


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
-- Name: notification; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.notification (
    shout integer,
    reaction integer,
    "user" integer,
    "createdAt" timestamp with time zone DEFAULT now() NOT NULL,
    seen boolean NOT NULL,
    type public.notificationtype NOT NULL,
    data jsonb,
    occurrences integer,
    id integer NOT NULL
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
-- Name: operation; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.operation (
    name character varying NOT NULL,
    id integer NOT NULL
);


--
-- Name: COLUMN operation.name; Type: COMMENT; Schema: public; Owner: -
--

COMMENT ON COLUMN public.operation.name IS 'Operation Name';


--
-- Name: operation_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.operation_id_seq
    AS integer
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: operation_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.operation_id_seq OWNED BY public.operation.id;


--
-- Name: permission; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.permission (
    role integer NOT NULL,
    operation integer NOT NULL,
    resource integer NOT NULL,
    id integer NOT NULL
);


--
-- Name: COLUMN permission.role; Type: COMMENT; Schema: public; Owner: -
--

COMMENT ON COLUMN public.permission.role IS 'Role';


--
-- Name: COLUMN permission.operation; Type: COMMENT; Schema: public; Owner: -
--

COMMENT ON COLUMN public.permission.operation IS 'Operation';


--
-- Name: COLUMN permission.resource; Type: COMMENT; Schema: public; Owner: -
--

COMMENT ON COLUMN public.permission.resource IS 'Resource';


--
-- Name: permission_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.permission_id_seq
    AS integer
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: permission_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.permission_id_seq OWNED BY public.permission.id;


--
-- Name: reaction; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.reaction (
    body character varying,
    "createdAt" timestamp with time zone DEFAULT now() NOT NULL,
    "createdBy" integer NOT NULL,
    "updatedAt" timestamp with time zone,
    "updatedBy" integer,
    "deletedAt" timestamp with time zone,
    "deletedBy" integer,
    shout integer NOT NULL,
    "replyTo" integer,
    range character varying,
    kind public.reactionkind NOT NULL,
    oid character varying,
    id integer NOT NULL
);


--
-- Name: COLUMN reaction.body; Type: COMMENT; Schema: public; Owner: -
--

COMMENT ON COLUMN public.reaction.body IS 'Reaction Body';


--
-- Name: COLUMN reaction."createdAt"; Type: COMMENT; Schema: public; Owner: -
--

COMMENT ON COLUMN public.reaction."createdAt" IS 'Created at';


--
-- Name: COLUMN reaction."createdBy"; Type: COMMENT; Schema: public; Owner: -
--

COMMENT ON COLUMN public.reaction."createdBy" IS 'Sender';


--
-- Name: COLUMN reaction."updatedAt"; Type: COMMENT; Schema: public; Owner: -
--

COMMENT ON COLUMN public.reaction."updatedAt" IS 'Updated at';


--
-- Name: COLUMN reaction."updatedBy"; Type: COMMENT; Schema: public; Owner: -
--

COMMENT ON COLUMN public.reaction."updatedBy" IS 'Last Editor';


--
-- Name: COLUMN reaction."deletedAt"; Type: COMMENT; Schema: public; Owner: -
--

COMMENT ON COLUMN public.reaction."deletedAt" IS 'Deleted at';


--
-- Name: COLUMN reaction."deletedBy"; Type: COMMENT; Schema: public; Owner: -
--

COMMENT ON COLUMN public.reaction."deletedBy" IS 'Deleted by';


--
-- Name: COLUMN reaction."replyTo"; Type: COMMENT; Schema: public; Owner: -
--

COMMENT ON COLUMN public.reaction."replyTo" IS 'Reply to reaction ID';


--
-- Name: COLUMN reaction.range; Type: COMMENT; Schema: public; Owner: -
--

COMMENT ON COLUMN public.reaction.range IS 'Range in format <start index>:<end>';


--
-- Name: COLUMN reaction.kind; Type: COMMENT; Schema: public; Owner: -
--

COMMENT ON COLUMN public.reaction.kind IS 'Reaction kind';


--
-- Name: COLUMN reaction.oid; Type: COMMENT; Schema: public; Owner: -
--

COMMENT ON COLUMN public.reaction.oid IS 'Old ID';


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
-- Name: resource; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.resource (
    "resourceClass" character varying NOT NULL,
    name character varying NOT NULL,
    id integer NOT NULL
);


--
-- Name: COLUMN resource."resourceClass"; Type: COMMENT; Schema: public; Owner: -
--

COMMENT ON COLUMN public.resource."resourceClass" IS 'Resource class';


--
-- Name: COLUMN resource.name; Type: COMMENT; Schema: public; Owner: -
--

COMMENT ON COLUMN public.resource.name IS 'Resource name';


--
-- Name: resource_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.resource_id_seq
    AS integer
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: resource_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.resource_id_seq OWNED BY public.resource.id;


--
-- Name: role; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.role (
    name character varying NOT NULL,
    "desc" character varying,
    community integer NOT NULL,
    id integer NOT NULL
);


--
-- Name: COLUMN role.name; Type: COMMENT; Schema: public; Owner: -
--

COMMENT ON COLUMN public.role.name IS 'Role Name';


--
-- Name: COLUMN role."desc"; Type: COMMENT; Schema: public; Owner: -
--

COMMENT ON COLUMN public.role."desc" IS 'Role Description';


--
-- Name: COLUMN role.community; Type: COMMENT; Schema: public; Owner: -
--

COMMENT ON COLUMN public.role.community IS 'Community';


--
-- Name: role_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.role_id_seq
    AS integer
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: role_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.role_id_seq OWNED BY public.role.id;


--
-- Name: shout; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.shout (
    "createdAt" timestamp with time zone DEFAULT now() NOT NULL,
    "updatedAt" timestamp with time zone,
    "publishedAt" timestamp with time zone,
    "deletedAt" timestamp with time zone,
    "createdBy" integer,
    "deletedBy" integer,
    slug character varying,
    cover character varying,
    lead character varying,
    description character varying,
    body character varying NOT NULL,
    title character varying,
    subtitle character varying,
    layout character varying,
    media json,
    "viewsOld" integer,
    "viewsAckee" integer,
    community integer,
    lang character varying NOT NULL,
    "mainTopic" character varying,
    visibility character varying,
    "versionOf" integer,
    oid character varying,
    id integer NOT NULL
);


--
-- Name: COLUMN shout."createdAt"; Type: COMMENT; Schema: public; Owner: -
--

COMMENT ON COLUMN public.shout."createdAt" IS 'Created at';


--
-- Name: COLUMN shout."updatedAt"; Type: COMMENT; Schema: public; Owner: -
--

COMMENT ON COLUMN public.shout."updatedAt" IS 'Updated at';


--
-- Name: COLUMN shout."createdBy"; Type: COMMENT; Schema: public; Owner: -
--

COMMENT ON COLUMN public.shout."createdBy" IS 'Created By';


--
-- Name: COLUMN shout.cover; Type: COMMENT; Schema: public; Owner: -
--

COMMENT ON COLUMN public.shout.cover IS 'Cover image url';


--
-- Name: COLUMN shout.body; Type: COMMENT; Schema: public; Owner: -
--

COMMENT ON COLUMN public.shout.body IS 'Body';


--
-- Name: COLUMN shout.lang; Type: COMMENT; Schema: public; Owner: -
--

COMMENT ON COLUMN public.shout.lang IS 'Language';


--
-- Name: shout_author; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.shout_author (
    shout integer NOT NULL,
    "user" integer NOT NULL,
    caption character varying
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
    "createdAt" timestamp with time zone DEFAULT now() NOT NULL,
    "deletedAt" timestamp with time zone
);


--
-- Name: COLUMN shout_reactions_followers."createdAt"; Type: COMMENT; Schema: public; Owner: -
--

COMMENT ON COLUMN public.shout_reactions_followers."createdAt" IS 'Created at';


--
-- Name: shout_topic; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.shout_topic (
    shout integer NOT NULL,
    topic integer NOT NULL
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
-- Name: COLUMN topic.community; Type: COMMENT; Schema: public; Owner: -
--

COMMENT ON COLUMN public.topic.community IS 'Community';


--
-- Name: COLUMN topic.oid; Type: COMMENT; Schema: public; Owner: -
--

COMMENT ON COLUMN public.topic.oid IS 'Old ID';


--
-- Name: topic_followers; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.topic_followers (
    follower integer NOT NULL,
    topic integer NOT NULL,
    "createdAt" timestamp with time zone DEFAULT now() NOT NULL,
    auto boolean NOT NULL
);


--
-- Name: COLUMN topic_followers."createdAt"; Type: COMMENT; Schema: public; Owner: -
--

COMMENT ON COLUMN public.topic_followers."createdAt" IS 'Created at';


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
-- Name: user; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public."user" (
    email character varying NOT NULL,
    username character varying NOT NULL,
    password character varying,
    bio character varying,
    about character varying,
    userpic character varying,
    name character varying,
    slug character varying,
    muted boolean,
    "emailConfirmed" boolean,
    "createdAt" timestamp with time zone DEFAULT now() NOT NULL,
    "lastSeen" timestamp with time zone DEFAULT now() NOT NULL,
    "deletedAt" timestamp with time zone,
    links json,
    oauth character varying,
    oid character varying,
    id integer NOT NULL
);


--
-- Name: COLUMN "user".email; Type: COMMENT; Schema: public; Owner: -
--

COMMENT ON COLUMN public."user".email IS 'Email';


--
-- Name: COLUMN "user".username; Type: COMMENT; Schema: public; Owner: -
--

COMMENT ON COLUMN public."user".username IS 'Login';


--
-- Name: COLUMN "user".password; Type: COMMENT; Schema: public; Owner: -
--

COMMENT ON COLUMN public."user".password IS 'Password';


--
-- Name: COLUMN "user".bio; Type: COMMENT; Schema: public; Owner: -
--

COMMENT ON COLUMN public."user".bio IS 'Bio';


--
-- Name: COLUMN "user".about; Type: COMMENT; Schema: public; Owner: -
--

COMMENT ON COLUMN public."user".about IS 'About';


--
-- Name: COLUMN "user".userpic; Type: COMMENT; Schema: public; Owner: -
--

COMMENT ON COLUMN public."user".userpic IS 'Userpic';


--
-- Name: COLUMN "user".name; Type: COMMENT; Schema: public; Owner: -
--

COMMENT ON COLUMN public."user".name IS 'Display name';


--
-- Name: COLUMN "user".slug; Type: COMMENT; Schema: public; Owner: -
--

COMMENT ON COLUMN public."user".slug IS 'User''s slug';


--
-- Name: COLUMN "user"."createdAt"; Type: COMMENT; Schema: public; Owner: -
--

COMMENT ON COLUMN public."user"."createdAt" IS 'Created at';


--
-- Name: COLUMN "user"."lastSeen"; Type: COMMENT; Schema: public; Owner: -
--

COMMENT ON COLUMN public."user"."lastSeen" IS 'Was online at';


--
-- Name: COLUMN "user"."deletedAt"; Type: COMMENT; Schema: public; Owner: -
--

COMMENT ON COLUMN public."user"."deletedAt" IS 'Deleted at';


--
-- Name: COLUMN "user".links; Type: COMMENT; Schema: public; Owner: -
--

COMMENT ON COLUMN public."user".links IS 'Links';


--
-- Name: user_id_seq; Type: SEQUENCE; Schema: public; Owner: -
--

CREATE SEQUENCE public.user_id_seq
    AS integer
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;


--
-- Name: user_id_seq; Type: SEQUENCE OWNED BY; Schema: public; Owner: -
--

ALTER SEQUENCE public.user_id_seq OWNED BY public."user".id;


--
-- Name: user_rating; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.user_rating (
    rater integer NOT NULL,
    "user" integer NOT NULL,
    value integer
);


--
-- Name: user_role; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.user_role (
    "user" integer NOT NULL,
    role integer NOT NULL
);


--
-- Name: community id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.community ALTER COLUMN id SET DEFAULT nextval('public.community_id_seq'::regclass);


--
-- Name: notification id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.notification ALTER COLUMN id SET DEFAULT nextval('public.notification_id_seq'::regclass);


--
-- Name: operation id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.operation ALTER COLUMN id SET DEFAULT nextval('public.operation_id_seq'::regclass);


--
-- Name: permission id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.permission ALTER COLUMN id SET DEFAULT nextval('public.permission_id_seq'::regclass);


--
-- Name: reaction id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.reaction ALTER COLUMN id SET DEFAULT nextval('public.reaction_id_seq'::regclass);


--
-- Name: resource id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.resource ALTER COLUMN id SET DEFAULT nextval('public.resource_id_seq'::regclass);


--
-- Name: role id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.role ALTER COLUMN id SET DEFAULT nextval('public.role_id_seq'::regclass);


--
-- Name: shout id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.shout ALTER COLUMN id SET DEFAULT nextval('public.shout_id_seq'::regclass);


--
-- Name: topic id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.topic ALTER COLUMN id SET DEFAULT nextval('public.topic_id_seq'::regclass);


--
-- Name: user id; Type: DEFAULT; Schema: public; Owner: -
--

ALTER TABLE ONLY public."user" ALTER COLUMN id SET DEFAULT nextval('public.user_id_seq'::regclass);


--
-- Name: author_follower author_follower_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.author_follower
    ADD CONSTRAINT author_follower_pkey PRIMARY KEY (follower, author);


--
-- Name: community_followers community_followers_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.community_followers
    ADD CONSTRAINT community_followers_pkey PRIMARY KEY (follower, community);


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
-- Name: notification notification_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.notification
    ADD CONSTRAINT notification_pkey PRIMARY KEY (id);


--
-- Name: operation operation_name_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.operation
    ADD CONSTRAINT operation_name_key UNIQUE (name);


--
-- Name: operation operation_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.operation
    ADD CONSTRAINT operation_pkey PRIMARY KEY (id);


--
-- Name: permission permission_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.permission
    ADD CONSTRAINT permission_pkey PRIMARY KEY (id);


--
-- Name: permission permission_role_operation_resource_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.permission
    ADD CONSTRAINT permission_role_operation_resource_key UNIQUE (role, operation, resource);


--
-- Name: reaction reaction_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.reaction
    ADD CONSTRAINT reaction_pkey PRIMARY KEY (id);


--
-- Name: resource resource_name_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.resource
    ADD CONSTRAINT resource_name_key UNIQUE (name);


--
-- Name: resource resource_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.resource
    ADD CONSTRAINT resource_pkey PRIMARY KEY (id);


--
-- Name: resource resource_resourceClass_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.resource
    ADD CONSTRAINT "resource_resourceClass_key" UNIQUE ("resourceClass");


--
-- Name: role role_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.role
    ADD CONSTRAINT role_pkey PRIMARY KEY (id);


--
-- Name: shout_author shout_author_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.shout_author
    ADD CONSTRAINT shout_author_pkey PRIMARY KEY (shout, "user");


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
-- Name: user user_email_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public."user"
    ADD CONSTRAINT user_email_key UNIQUE (email);


--
-- Name: user user_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public."user"
    ADD CONSTRAINT user_pkey PRIMARY KEY (id);


--
-- Name: user_rating user_rating_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.user_rating
    ADD CONSTRAINT user_rating_pkey PRIMARY KEY (rater, "user");


--
-- Name: user_role user_role_pkey; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.user_role
    ADD CONSTRAINT user_role_pkey PRIMARY KEY ("user", role);


--
-- Name: user user_slug_key; Type: CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public."user"
    ADD CONSTRAINT user_slug_key UNIQUE (slug);


--
-- Name: ix_author_follower_author; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX ix_author_follower_author ON public.author_follower USING btree (author);


--
-- Name: ix_author_follower_follower; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX ix_author_follower_follower ON public.author_follower USING btree (follower);


--
-- Name: ix_notification_createdAt; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX "ix_notification_createdAt" ON public.notification USING btree ("createdAt");


--
-- Name: ix_notification_reaction; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX ix_notification_reaction ON public.notification USING btree (reaction);


--
-- Name: ix_notification_seen; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX ix_notification_seen ON public.notification USING btree (seen);


--
-- Name: ix_notification_shout; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX ix_notification_shout ON public.notification USING btree (shout);


--
-- Name: ix_notification_user; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX ix_notification_user ON public.notification USING btree ("user");


--
-- Name: ix_reaction_createdBy; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX "ix_reaction_createdBy" ON public.reaction USING btree ("createdBy");


--
-- Name: ix_reaction_deletedBy; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX "ix_reaction_deletedBy" ON public.reaction USING btree ("deletedBy");


--
-- Name: ix_reaction_shout; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX ix_reaction_shout ON public.reaction USING btree (shout);


--
-- Name: ix_reaction_updatedBy; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX "ix_reaction_updatedBy" ON public.reaction USING btree ("updatedBy");


--
-- Name: ix_shout_author_shout; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX ix_shout_author_shout ON public.shout_author USING btree (shout);


--
-- Name: ix_shout_author_user; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX ix_shout_author_user ON public.shout_author USING btree ("user");


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
-- Name: ix_topic_followers_follower; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX ix_topic_followers_follower ON public.topic_followers USING btree (follower);


--
-- Name: ix_topic_followers_topic; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX ix_topic_followers_topic ON public.topic_followers USING btree (topic);


--
-- Name: ix_user_rating_rater; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX ix_user_rating_rater ON public.user_rating USING btree (rater);


--
-- Name: ix_user_rating_user; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX ix_user_rating_user ON public.user_rating USING btree ("user");


--
-- Name: ix_user_role_role; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX ix_user_role_role ON public.user_role USING btree (role);


--
-- Name: ix_user_role_user; Type: INDEX; Schema: public; Owner: -
--

CREATE INDEX ix_user_role_user ON public.user_role USING btree ("user");


--
-- Name: author_follower author_follower_author_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.author_follower
    ADD CONSTRAINT author_follower_author_fkey FOREIGN KEY (author) REFERENCES public."user"(id);


--
-- Name: author_follower author_follower_follower_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.author_follower
    ADD CONSTRAINT author_follower_follower_fkey FOREIGN KEY (follower) REFERENCES public."user"(id);


--
-- Name: community_followers community_followers_community_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.community_followers
    ADD CONSTRAINT community_followers_community_fkey FOREIGN KEY (community) REFERENCES public.community(id);


--
-- Name: community_followers community_followers_follower_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.community_followers
    ADD CONSTRAINT community_followers_follower_fkey FOREIGN KEY (follower) REFERENCES public."user"(id);


--
-- Name: notification notification_reaction_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.notification
    ADD CONSTRAINT notification_reaction_fkey FOREIGN KEY (reaction) REFERENCES public.reaction(id);


--
-- Name: notification notification_shout_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.notification
    ADD CONSTRAINT notification_shout_fkey FOREIGN KEY (shout) REFERENCES public.shout(id);


--
-- Name: notification notification_user_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.notification
    ADD CONSTRAINT notification_user_fkey FOREIGN KEY ("user") REFERENCES public."user"(id);


--
-- Name: permission permission_operation_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.permission
    ADD CONSTRAINT permission_operation_fkey FOREIGN KEY (operation) REFERENCES public.operation(id) ON DELETE CASCADE;


--
-- Name: permission permission_resource_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.permission
    ADD CONSTRAINT permission_resource_fkey FOREIGN KEY (resource) REFERENCES public.resource(id) ON DELETE CASCADE;


--
-- Name: permission permission_role_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.permission
    ADD CONSTRAINT permission_role_fkey FOREIGN KEY (role) REFERENCES public.role(id) ON DELETE CASCADE;


--
-- Name: reaction reaction_createdBy_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.reaction
    ADD CONSTRAINT "reaction_createdBy_fkey" FOREIGN KEY ("createdBy") REFERENCES public."user"(id);


--
-- Name: reaction reaction_deletedBy_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.reaction
    ADD CONSTRAINT "reaction_deletedBy_fkey" FOREIGN KEY ("deletedBy") REFERENCES public."user"(id);


--
-- Name: reaction reaction_replyTo_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.reaction
    ADD CONSTRAINT "reaction_replyTo_fkey" FOREIGN KEY ("replyTo") REFERENCES public.reaction(id);


--
-- Name: reaction reaction_shout_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.reaction
    ADD CONSTRAINT reaction_shout_fkey FOREIGN KEY (shout) REFERENCES public.shout(id);


--
-- Name: reaction reaction_updatedBy_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.reaction
    ADD CONSTRAINT "reaction_updatedBy_fkey" FOREIGN KEY ("updatedBy") REFERENCES public."user"(id);


--
-- Name: role role_community_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.role
    ADD CONSTRAINT role_community_fkey FOREIGN KEY (community) REFERENCES public.community(id) ON DELETE CASCADE;


--
-- Name: shout_author shout_author_shout_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.shout_author
    ADD CONSTRAINT shout_author_shout_fkey FOREIGN KEY (shout) REFERENCES public.shout(id);


--
-- Name: shout_author shout_author_user_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.shout_author
    ADD CONSTRAINT shout_author_user_fkey FOREIGN KEY ("user") REFERENCES public."user"(id);


--
-- Name: shout shout_community_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.shout
    ADD CONSTRAINT shout_community_fkey FOREIGN KEY (community) REFERENCES public.community(id);


--
-- Name: shout shout_createdBy_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.shout
    ADD CONSTRAINT "shout_createdBy_fkey" FOREIGN KEY ("createdBy") REFERENCES public."user"(id);


--
-- Name: shout shout_deletedBy_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.shout
    ADD CONSTRAINT "shout_deletedBy_fkey" FOREIGN KEY ("deletedBy") REFERENCES public."user"(id);


--
-- Name: shout shout_mainTopic_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.shout
    ADD CONSTRAINT "shout_mainTopic_fkey" FOREIGN KEY ("mainTopic") REFERENCES public.topic(slug);


--
-- Name: shout_reactions_followers shout_reactions_followers_follower_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.shout_reactions_followers
    ADD CONSTRAINT shout_reactions_followers_follower_fkey FOREIGN KEY (follower) REFERENCES public."user"(id);


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
-- Name: shout shout_versionOf_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.shout
    ADD CONSTRAINT "shout_versionOf_fkey" FOREIGN KEY ("versionOf") REFERENCES public.shout(id);


--
-- Name: topic topic_community_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.topic
    ADD CONSTRAINT topic_community_fkey FOREIGN KEY (community) REFERENCES public.community(id);


--
-- Name: topic_followers topic_followers_follower_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.topic_followers
    ADD CONSTRAINT topic_followers_follower_fkey FOREIGN KEY (follower) REFERENCES public."user"(id);


--
-- Name: topic_followers topic_followers_topic_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.topic_followers
    ADD CONSTRAINT topic_followers_topic_fkey FOREIGN KEY (topic) REFERENCES public.topic(id);


--
-- Name: user_rating user_rating_rater_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.user_rating
    ADD CONSTRAINT user_rating_rater_fkey FOREIGN KEY (rater) REFERENCES public."user"(id);


--
-- Name: user_rating user_rating_user_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.user_rating
    ADD CONSTRAINT user_rating_user_fkey FOREIGN KEY ("user") REFERENCES public."user"(id);


--
-- Name: user_role user_role_role_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.user_role
    ADD CONSTRAINT user_role_role_fkey FOREIGN KEY (role) REFERENCES public.role(id);


--
-- Name: user_role user_role_user_fkey; Type: FK CONSTRAINT; Schema: public; Owner: -
--

ALTER TABLE ONLY public.user_role
    ADD CONSTRAINT user_role_user_fkey FOREIGN KEY ("user") REFERENCES public."user"(id);


--
-- PostgreSQL database dump complete
--
