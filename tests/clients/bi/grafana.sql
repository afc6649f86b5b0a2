-- Grafana's PostgreSQL data source (grafana/grafana,
-- public/app/plugins/datasource/grafana-postgresql-datasource): the queries its
-- configuration page and query editor run to detect the server and list schemas,
-- tables and columns, with the editor's table `items` (and `public.items`) filled in.
-- Format: see metabase.sql.

-- source: postgresMetaQuery.ts, getVersion (configuration/useAutoDetectFeatures.ts)
SELECT current_setting('server_version_num')::int/100 as version;

-- source: postgresMetaQuery.ts, getTimescaleDBVersion
SELECT extversion FROM pg_extension WHERE extname = 'timescaledb';

-- source: postgresMetaQuery.ts, showSchemas
-- expect: public
SELECT schema_name AS "name"
    FROM information_schema.schemata
    WHERE schema_name NOT IN ('information_schema',
                              'pg_catalog',
                              'pg_toast',
                              '_timescaledb_cache',
                              '_timescaledb_catalog',
                              '_timescaledb_internal',
                              '_timescaledb_config',
                              'timescaledb_information',
                              'timescaledb_experimental')
    ORDER BY schema_name;

-- source: postgresMetaQuery.ts, showTables() with buildSchemaConstraint() (datasource.ts, fetchTables)
-- expect: items, quad
SELECT
    CASE WHEN 
          quote_ident(table_schema) IN (
          SELECT
            CASE WHEN trim(s[i]) = '"$user"' THEN user ELSE trim(s[i]) END
          FROM
            generate_series(
              array_lower(string_to_array(current_setting('search_path'),','),1),
              array_upper(string_to_array(current_setting('search_path'),','),1)
            ) as i,
            string_to_array(current_setting('search_path'),',') s
          )
      THEN quote_ident(table_name)
      ELSE quote_ident(table_schema) || '.' || quote_ident(table_name)
    END AS "table"
    FROM information_schema.tables
    WHERE quote_ident(table_schema) NOT IN ('information_schema',
                             'pg_catalog',
                             '_timescaledb_cache',
                             '_timescaledb_catalog',
                             '_timescaledb_internal',
                             '_timescaledb_config',
                             'timescaledb_information',
                             'timescaledb_experimental')
    ORDER BY CASE WHEN 
          quote_ident(table_schema) IN (
          SELECT
            CASE WHEN trim(s[i]) = '"$user"' THEN user ELSE trim(s[i]) END
          FROM
            generate_series(
              array_lower(string_to_array(current_setting('search_path'),','),1),
              array_upper(string_to_array(current_setting('search_path'),','),1)
            ) as i,
            string_to_array(current_setting('search_path'),',') s
          ) THEN 0 ELSE 1 END, 1;

-- source: postgresMetaQuery.ts, showTables('public')
-- expect: items, quad
SELECT quote_ident(table_name) AS "table"
      FROM information_schema.tables
      WHERE quote_ident(table_schema) = 'public'
      ORDER BY 1;

-- source: postgresMetaQuery.ts, getSchema('items') (datasource.ts, fetchFields)
-- expect: id, name, price, data, bigint, text
SELECT quote_ident(column_name) AS "column", data_type AS "type"
    FROM information_schema.columns
    WHERE
      CASE WHEN array_length(parse_ident('items'),1) = 2
        THEN quote_ident(table_schema) = (parse_ident('items'))[1]
          AND quote_ident(table_name) = (parse_ident('items'))[2]
        ELSE quote_ident(table_name) = 'items'
          AND 
          quote_ident(table_schema) IN (
          SELECT
            CASE WHEN trim(s[i]) = '"$user"' THEN user ELSE trim(s[i]) END
          FROM
            generate_series(
              array_lower(string_to_array(current_setting('search_path'),','),1),
              array_upper(string_to_array(current_setting('search_path'),','),1)
            ) as i,
            string_to_array(current_setting('search_path'),',') s
          )
      END;

-- source: postgresMetaQuery.ts, getSchema('public.items')
-- expect: id, name, price, data
SELECT quote_ident(column_name) AS "column", data_type AS "type"
    FROM information_schema.columns
    WHERE
      CASE WHEN array_length(parse_ident('public.items'),1) = 2
        THEN quote_ident(table_schema) = (parse_ident('public.items'))[1]
          AND quote_ident(table_name) = (parse_ident('public.items'))[2]
        ELSE quote_ident(table_name) = 'public.items'
          AND 
          quote_ident(table_schema) IN (
          SELECT
            CASE WHEN trim(s[i]) = '"$user"' THEN user ELSE trim(s[i]) END
          FROM
            generate_series(
              array_lower(string_to_array(current_setting('search_path'),','),1),
              array_upper(string_to_array(current_setting('search_path'),','),1)
            ) as i,
            string_to_array(current_setting('search_path'),',') s
          )
      END;

-- source: the query editor's builder (sqlUtil.ts, toRawSql) for items with a LIMIT
SELECT id, name FROM items LIMIT 50 ;
