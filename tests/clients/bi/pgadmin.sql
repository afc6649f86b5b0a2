-- pgAdmin 4 (pgadmin-org/pgadmin4, on psycopg): what it runs when it connects to a
-- server and expands the browser tree to Databases > postgres > Schemas > public >
-- Tables > items > Columns. Template variables are filled in as pgAdmin renders them
-- for this server (last_system_oid 16383, schema OID 2200, the table's OID).
-- Format: see metabase.sql.

-- source: web/pgadmin/utils/driver/psycopg3/connection.py (connection start-up; one simple query there; pgAdmin 9.x reads pg_show_all_settings() where 8.x read pg_settings)
SET DateStyle=ISO;
SET client_min_messages=notice;
SELECT set_config('bytea_output','hex',false) FROM pg_show_all_settings() WHERE name = 'bytea_output';
SET client_encoding='utf-8';
SELECT version();

-- source: web/pgadmin/utils/driver/psycopg3/connection.py (pgAdmin 9.x, for servers from PostgreSQL 12 on)
SELECT gss_authenticated, encrypted FROM pg_catalog.pg_stat_gssapi WHERE pid = pg_backend_pid();

-- source: web/pgadmin/utils/driver/psycopg3/connection.py, _set_server_type_and_password / database info
-- expect: postgres, UTF8
SELECT
    db.oid as did, db.datname, db.datallowconn,
    pg_encoding_to_char(db.encoding) AS serverencoding,
    has_database_privilege(db.oid, 'CREATE') as cancreate,
    datistemplate
FROM
    pg_catalog.pg_database db
WHERE db.datname = current_database();

-- source: web/pgadmin/utils/driver/psycopg3/connection.py, _set_user_info
-- expect: postgres
SELECT
    roles.oid as id, roles.rolname as name,
    roles.rolsuper as is_superuser,
    CASE WHEN roles.rolsuper THEN true ELSE roles.rolcreaterole END as
    can_create_role,
    CASE WHEN roles.rolsuper THEN true
    ELSE roles.rolcreatedb END as can_create_db,
    CASE WHEN 'pg_signal_backend'=ANY(ARRAY(WITH RECURSIVE cte AS (
    SELECT pg_roles.oid,pg_roles.rolname FROM pg_roles
        WHERE pg_roles.oid = roles.oid
    UNION ALL
    SELECT m.roleid,pgr.rolname FROM cte cte_1
        JOIN pg_auth_members m ON m.member = cte_1.oid
        JOIN pg_roles pgr ON pgr.oid = m.roleid)
    SELECT rolname  FROM cte)) THEN True
    ELSE False END as can_signal_backend
FROM
    pg_catalog.pg_roles as roles
WHERE
    rolname = current_user;

-- source: web/pgadmin/browser/server_groups/servers/templates/connect/sql/10_plus/check_recovery.sql
SELECT CASE WHEN usesuper
       THEN pg_is_in_recovery()
       ELSE FALSE
       END as inrecovery,
       CASE WHEN usesuper AND pg_is_in_recovery()
       THEN pg_is_wal_replay_paused()
       ELSE FALSE
       END as isreplaypaused
FROM pg_user WHERE usename=current_user;

-- source: web/pgadmin/browser/server_groups/servers/databases/templates/databases/sql/default/nodes.sql
-- expect: postgres
SELECT
    db.oid as did, db.datname as name, ta.spcname as spcname, db.datallowconn,
    db.datistemplate AS is_template,
    pg_catalog.has_database_privilege(db.oid, 'CREATE') as cancreate, datdba as owner,
    descr.description
FROM
    pg_catalog.pg_database db
    LEFT OUTER JOIN pg_catalog.pg_tablespace ta ON db.dattablespace = ta.oid
    LEFT OUTER JOIN pg_catalog.pg_shdescription descr ON (
        db.oid=descr.objoid AND descr.classoid='pg_database'::regclass
    )
WHERE 
    db.oid > 16383::OID OR db.datname IN ('postgres', 'edb')

ORDER BY datname;

-- source: web/pgadmin/browser/server_groups/servers/databases/schemas/templates/schemas/pg/default/sql/nodes.sql
-- (with catalog/pg/macros/catalogs.sql LIST('nsp'))
-- expect: public
SELECT
    nsp.oid,
    nsp.nspname as name,
    pg_catalog.has_schema_privilege(nsp.oid, 'CREATE') as can_create,
    pg_catalog.has_schema_privilege(nsp.oid, 'USAGE') as has_usage,
    des.description
FROM
    pg_catalog.pg_namespace nsp
    LEFT OUTER JOIN pg_catalog.pg_description des ON
        (des.objoid=nsp.oid AND des.classoid='pg_namespace'::regclass)
WHERE
     nspname NOT LIKE E'pg\\_%' AND
    NOT (
    (nsp.nspname = 'pg_catalog' AND EXISTS
        (SELECT 1 FROM pg_catalog.pg_class WHERE relname = 'pg_class' AND
            relnamespace = nsp.oid LIMIT 1)) OR
    (nsp.nspname = 'pgagent' AND EXISTS
        (SELECT 1 FROM pg_catalog.pg_class WHERE relname = 'pga_job' AND
            relnamespace = nsp.oid LIMIT 1)) OR
    (nsp.nspname = 'information_schema' AND EXISTS
        (SELECT 1 FROM pg_catalog.pg_class WHERE relname = 'tables' AND
            relnamespace = nsp.oid LIMIT 1))
    )
ORDER BY nspname;

-- source: web/pgadmin/browser/server_groups/servers/databases/schemas/tables/templates/tables/sql/default/nodes.sql
-- expect: items, quad
SELECT rel.oid, rel.relname AS name,
    (SELECT count(*) FROM pg_trigger WHERE tgrelid=rel.oid) AS triggercount,
    (SELECT count(*) FROM pg_trigger WHERE tgrelid=rel.oid AND tgenabled = 'O') AS has_enable_triggers,
	(SELECT count(1) FROM pg_inherits WHERE inhrelid=rel.oid LIMIT 1) as is_inherits,
	(SELECT count(1) FROM pg_inherits WHERE inhparent=rel.oid LIMIT 1) as is_inherited
FROM pg_class rel
    WHERE rel.relkind IN ('r','s','t') AND rel.relnamespace = 2200::oid
    ORDER BY rel.relname;

-- source: web/pgadmin/browser/server_groups/servers/databases/schemas/tables/templates/columns/sql/default/nodes.sql
-- expect: id, name, price, data, bigint, text
SELECT att.attname as name, att.attnum as OID, format_type(ty.oid,NULL) AS datatype,
att.attnotnull as not_null, att.atthasdef as has_default_val
FROM pg_attribute att
    JOIN pg_type ty ON ty.oid=atttypid
    JOIN pg_namespace tn ON tn.oid=ty.typnamespace
    JOIN pg_class cl ON cl.oid=att.attrelid
    JOIN pg_namespace na ON na.oid=cl.relnamespace
    LEFT OUTER JOIN pg_type et ON et.oid=ty.typelem
    LEFT OUTER JOIN pg_attrdef def ON adrelid=att.attrelid AND adnum=att.attnum
    LEFT OUTER JOIN (pg_depend JOIN pg_class cs ON classid='pg_class'::regclass AND objid=cs.oid AND cs.relkind='S') ON refobjid=att.attrelid AND refobjsubid=att.attnum
    LEFT OUTER JOIN pg_namespace ns ON ns.oid=cs.relnamespace
    LEFT OUTER JOIN pg_index pi ON pi.indrelid=att.attrelid AND indisprimary
WHERE
    att.attrelid = :items_oid::oid
    AND att.attnum > 0
    AND att.attisdropped IS FALSE
ORDER BY att.attnum;

-- source: the query tool's result-type lookup (web/pgadmin/tools/sqleditor)
SELECT oid, pg_catalog.format_type(oid, NULL) AS typname FROM pg_catalog.pg_type WHERE oid IN (25) ORDER BY oid;
