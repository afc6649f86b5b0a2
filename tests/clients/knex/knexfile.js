// Knex's configuration as its docs set one up for PostgreSQL; the connection comes
// from PGHOST/PGPORT/PGUSER/PGDATABASE, which tests/client_knex.rs points at pgwide.
module.exports = {
  client: 'pg',
  connection: {
    host: process.env.PGHOST,
    port: Number(process.env.PGPORT),
    user: process.env.PGUSER,
    database: process.env.PGDATABASE,
  },
  migrations: { directory: './migrations', tableName: 'knex_migrations' },
};
