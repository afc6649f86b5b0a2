//! Catalog relations that always exist but are empty in pgwide: it has no range
//! types, views, triggers, policies, inheritance, publications, conversions, casts,
//! operators, languages or foreign data as catalog entries. Clients join
//! them in their introspection queries, so each needs its columns, but never a row.

use super::memory_table::Col;

/// Catalog tables that always exist but are empty in pgwide (no views, triggers,
/// policies, inheritance, publications). Queries that inner-join
/// one are answered with no rows without planning (see `pg_compat`).
pub const EMPTY_TABLES: &[(&str, &[Col])] = &[
    (
        "pg_inherits",
        &[
            ("inhrelid", 'i'),
            ("inhparent", 'i'),
            ("inhseqno", 'i'),
            ("inhdetachpending", 'b'),
        ],
    ),
    (
        "pg_policy",
        &[
            ("oid", 'i'),
            ("polname", 'n'),
            ("polrelid", 'i'),
            ("polcmd", 't'),
            ("polpermissive", 'b'),
            ("polroles", 'a'),
            ("polqual", 't'),
            ("polwithcheck", 't'),
        ],
    ),
    (
        "pg_range",
        &[
            ("rngtypid", 'i'),
            ("rngsubtype", 'i'),
            ("rngmultitypid", 'i'),
            ("rngcollation", 'i'),
            ("rngsubopc", 'i'),
            ("rngcanonical", 'i'),
            ("rngsubdiff", 'i'),
        ],
    ),
    (
        "pg_trigger",
        &[
            ("oid", 'i'),
            ("tgrelid", 'i'),
            ("tgparentid", 'i'),
            ("tgname", 'n'),
            ("tgfoid", 'i'),
            ("tgtype", 'i'),
            ("tgenabled", 't'),
            ("tgisinternal", 'b'),
            ("tgconstrrelid", 'i'),
            ("tgconstrindid", 'i'),
            ("tgconstraint", 'i'),
            ("tgdeferrable", 'b'),
            ("tginitdeferred", 'b'),
            ("tgnargs", 'i'),
            ("tgattr", 't'),
            ("tgargs", 't'),
            ("tgqual", 't'),
            ("tgoldtable", 'n'),
            ("tgnewtable", 'n'),
        ],
    ),
    (
        "pg_rewrite",
        &[
            ("oid", 'i'),
            ("rulename", 'n'),
            ("ev_class", 'i'),
            ("ev_type", 't'),
            ("ev_enabled", 't'),
            ("is_instead", 'b'),
            ("ev_qual", 't'),
            ("ev_action", 't'),
        ],
    ),
    (
        "pg_statistic_ext",
        &[("oid", 'i'), ("stxrelid", 'i'), ("stxname", 't')],
    ),
    (
        "pg_publication",
        &[("oid", 'i'), ("pubname", 't'), ("puballtables", 'b')],
    ),
    (
        "pg_publication_rel",
        &[("oid", 'i'), ("prpubid", 'i'), ("prrelid", 'i')],
    ),
    (
        "pg_publication_namespace",
        &[("oid", 'i'), ("pnpubid", 'i'), ("pnnspid", 'i')],
    ),
    (
        "pg_extension",
        &[("oid", 'i'), ("extname", 't'), ("extversion", 't')],
    ),
    ("pg_matviews", &[("schemaname", 'n'), ("matviewname", 't')]),
    // Text search, foreign-data user mappings, logical replication subscriptions and
    // operator classes: pgwide has none (psql's \dF, \deu, \dRs, \dAc list nothing).
    (
        "pg_ts_config",
        &[
            ("oid", 'i'),
            ("cfgname", 'n'),
            ("cfgnamespace", 'i'),
            ("cfgowner", 'i'),
            ("cfgparser", 'i'),
        ],
    ),
    (
        "pg_user_mappings",
        &[
            ("umid", 'i'),
            ("srvid", 'i'),
            ("srvname", 'n'),
            ("umuser", 'i'),
            ("usename", 'n'),
            ("umoptions", 'a'),
        ],
    ),
    (
        "pg_subscription",
        &[
            ("oid", 'i'),
            ("subdbid", 'i'),
            ("subname", 'n'),
            ("subowner", 'i'),
            ("subenabled", 'b'),
            ("subbinary", 'b'),
            ("substream", 'b'),
            ("subconninfo", 't'),
            ("subslotname", 'n'),
            ("subsynccommit", 't'),
            ("subpublications", 'a'),
        ],
    ),
    (
        "pg_opclass",
        &[
            ("oid", 'i'),
            ("opcmethod", 'i'),
            ("opcname", 'n'),
            ("opcnamespace", 'i'),
            ("opcowner", 'i'),
            ("opcfamily", 'i'),
            ("opcintype", 'i'),
            ("opcdefault", 'b'),
            ("opckeytype", 'i'),
        ],
    ),
    // pgwide replicates through its store, not through PostgreSQL's slots.
    (
        "pg_replication_slots",
        &[
            ("slot_name", 'n'),
            ("plugin", 'n'),
            ("slot_type", 't'),
            ("datoid", 'i'),
            ("database", 'n'),
            ("temporary", 'b'),
            ("active", 'b'),
            ("active_pid", 'i'),
            ("xmin", 't'),
            ("catalog_xmin", 't'),
            ("restart_lsn", 't'),
            ("confirmed_flush_lsn", 't'),
            ("wal_status", 't'),
            ("safe_wal_size", 'i'),
            ("two_phase", 'b'),
        ],
    ),
    (
        "pg_auth_members",
        &[
            ("roleid", 'i'),
            ("member", 'i'),
            ("grantor", 'i'),
            ("admin_option", 'b'),
        ],
    ),
    (
        "pg_shdescription",
        &[("objoid", 'i'), ("classoid", 'i'), ("description", 't')],
    ),
    ("pg_foreign_table", &[("ftrelid", 'i'), ("ftserver", 'i')]),
    (
        "pg_partitioned_table",
        &[("partrelid", 'i'), ("partstrat", 't')],
    ),
    // psql's `\dc`, `\dC`, `\do`, `\dL`, `\dy`, `\dew`, `\des` and `\drds` list
    // these; pgwide has no conversions, casts, operators, languages, event triggers,
    // foreign data or per-role settings as catalog entries.
    (
        "pg_conversion",
        &[
            ("oid", 'i'),
            ("conname", 'n'),
            ("connamespace", 'i'),
            ("conowner", 'i'),
            ("conforencoding", 'i'),
            ("contoencoding", 'i'),
            ("conproc", 'i'),
            ("condefault", 'b'),
        ],
    ),
    (
        "pg_cast",
        &[
            ("oid", 'i'),
            ("castsource", 'i'),
            ("casttarget", 'i'),
            ("castfunc", 'i'),
            ("castcontext", 't'),
            ("castmethod", 't'),
        ],
    ),
    (
        "pg_operator",
        &[
            ("oid", 'i'),
            ("oprname", 'n'),
            ("oprnamespace", 'i'),
            ("oprowner", 'i'),
            ("oprkind", 't'),
            ("oprcanmerge", 'b'),
            ("oprcanhash", 'b'),
            ("oprleft", 'i'),
            ("oprright", 'i'),
            ("oprresult", 'i'),
            ("oprcom", 'i'),
            ("oprnegate", 'i'),
            ("oprcode", 'i'),
            ("oprrest", 'i'),
            ("oprjoin", 'i'),
        ],
    ),
    (
        "pg_language",
        &[
            ("oid", 'i'),
            ("lanname", 'n'),
            ("lanowner", 'i'),
            ("lanispl", 'b'),
            ("lanpltrusted", 'b'),
            ("lanplcallfoid", 'i'),
            ("laninline", 'i'),
            ("lanvalidator", 'i'),
            ("lanacl", 'a'),
        ],
    ),
    (
        "pg_event_trigger",
        &[
            ("oid", 'i'),
            ("evtname", 'n'),
            ("evtevent", 'n'),
            ("evtowner", 'i'),
            ("evtfoid", 'i'),
            ("evtenabled", 't'),
            ("evttags", 'a'),
        ],
    ),
    (
        "pg_foreign_data_wrapper",
        &[
            ("oid", 'i'),
            ("fdwname", 'n'),
            ("fdwowner", 'i'),
            ("fdwhandler", 'i'),
            ("fdwvalidator", 'i'),
            ("fdwacl", 'a'),
            ("fdwoptions", 'a'),
        ],
    ),
    (
        "pg_foreign_server",
        &[
            ("oid", 'i'),
            ("srvname", 'n'),
            ("srvowner", 'i'),
            ("srvfdw", 'i'),
            ("srvtype", 't'),
            ("srvversion", 't'),
            ("srvacl", 'a'),
            ("srvoptions", 'a'),
        ],
    ),
    (
        "pg_db_role_setting",
        &[("setdatabase", 'i'), ("setrole", 'i'), ("setconfig", 'a')],
    ),
    // pg_dump reads the ones below: privileges granted at initdb or by extensions,
    // operator families, text search, default privileges, transforms, large objects
    // and security labels, none of which pgwide has.
    (
        "pg_init_privs",
        &[
            ("objoid", 'i'),
            ("classoid", 'i'),
            ("objsubid", 'i'),
            ("privtype", 't'),
            ("initprivs", 'a'),
        ],
    ),
    (
        "pg_opfamily",
        &[
            ("oid", 'i'),
            ("opfmethod", 'i'),
            ("opfname", 'n'),
            ("opfnamespace", 'i'),
            ("opfowner", 'i'),
        ],
    ),
    (
        "pg_amop",
        &[
            ("oid", 'i'),
            ("amopfamily", 'i'),
            ("amoplefttype", 'i'),
            ("amoprighttype", 'i'),
            ("amopstrategy", 'i'),
            ("amoppurpose", 't'),
            ("amopopr", 'i'),
            ("amopmethod", 'i'),
            ("amopsortfamily", 'i'),
        ],
    ),
    (
        "pg_amproc",
        &[
            ("oid", 'i'),
            ("amprocfamily", 'i'),
            ("amproclefttype", 'i'),
            ("amprocrighttype", 'i'),
            ("amprocnum", 'i'),
            ("amproc", 't'),
        ],
    ),
    (
        "pg_ts_parser",
        &[
            ("oid", 'i'),
            ("prsname", 'n'),
            ("prsnamespace", 'i'),
            ("prsstart", 't'),
            ("prstoken", 't'),
            ("prsend", 't'),
            ("prsheadline", 't'),
            ("prslextype", 't'),
        ],
    ),
    (
        "pg_ts_template",
        &[
            ("oid", 'i'),
            ("tmplname", 'n'),
            ("tmplnamespace", 'i'),
            ("tmplinit", 't'),
            ("tmpllexize", 't'),
        ],
    ),
    (
        "pg_ts_dict",
        &[
            ("oid", 'i'),
            ("dictname", 'n'),
            ("dictnamespace", 'i'),
            ("dictowner", 'i'),
            ("dicttemplate", 'i'),
            ("dictinitoption", 't'),
        ],
    ),
    (
        "pg_default_acl",
        &[
            ("oid", 'i'),
            ("defaclrole", 'i'),
            ("defaclnamespace", 'i'),
            ("defaclobjtype", 't'),
            ("defaclacl", 'a'),
        ],
    ),
    (
        "pg_transform",
        &[
            ("oid", 'i'),
            ("trftype", 'i'),
            ("trflang", 'i'),
            ("trffromsql", 't'),
            ("trftosql", 't'),
        ],
    ),
    (
        "pg_largeobject_metadata",
        &[("oid", 'i'), ("lomowner", 'i'), ("lomacl", 'a')],
    ),
    (
        "pg_seclabel",
        &[
            ("objoid", 'i'),
            ("classoid", 'i'),
            ("objsubid", 'i'),
            ("provider", 't'),
            ("label", 't'),
        ],
    ),
    (
        "pg_seclabels",
        &[
            ("objoid", 'i'),
            ("classoid", 'i'),
            ("objsubid", 'i'),
            ("objtype", 't'),
            ("objnamespace", 'i'),
            ("objname", 't'),
            ("provider", 't'),
            ("label", 't'),
        ],
    ),
    // pg_dumpall reads privileges granted on configuration parameters (GRANT SET ON
    // PARAMETER), which pgwide has no statement for.
    (
        "pg_parameter_acl",
        &[("oid", 'i'), ("parname", 't'), ("paracl", 'a')],
    ),
    // pgAdmin reads these: shared security labels, the owners and grantees of objects
    // (every object belongs to the bootstrap superuser, whose ownership PostgreSQL
    // does not record either), prepared transactions (pgwide has no PREPARE
    // TRANSACTION) and standbys (pgwide streams to none).
    (
        "pg_shseclabel",
        &[
            ("objoid", 'i'),
            ("classoid", 'i'),
            ("provider", 't'),
            ("label", 't'),
        ],
    ),
    (
        "pg_shdepend",
        &[
            ("dbid", 'i'),
            ("classid", 'i'),
            ("objid", 'i'),
            ("objsubid", 'i'),
            ("refclassid", 'i'),
            ("refobjid", 'i'),
            ("deptype", 't'),
        ],
    ),
    (
        "pg_prepared_xacts",
        &[
            ("transaction", 't'),
            ("gid", 't'),
            ("prepared", 'z'),
            ("owner", 'n'),
            ("database", 'n'),
        ],
    ),
    (
        "pg_stat_replication",
        &[
            ("pid", 'i'),
            ("usesysid", 'i'),
            ("usename", 'n'),
            ("application_name", 't'),
            ("client_addr", 't'),
            ("client_hostname", 't'),
            ("client_port", 'i'),
            ("backend_start", 'z'),
            ("backend_xmin", 't'),
            ("state", 't'),
            ("sent_lsn", 't'),
            ("write_lsn", 't'),
            ("flush_lsn", 't'),
            ("replay_lsn", 't'),
            ("write_lag", 't'),
            ("flush_lag", 't'),
            ("replay_lag", 't'),
            ("sync_priority", 'i'),
            ("sync_state", 't'),
            ("reply_time", 'z'),
        ],
    ),
];
