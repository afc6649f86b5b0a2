// A second migration, as a schema grows: a column added, then dropped on rollback.
exports.up = async function (knex) {
  await knex.schema.alterTable('users', (t) => {
    t.text('bio').defaultTo('');
  });
};

exports.down = async function (knex) {
  await knex.schema.alterTable('users', (t) => {
    t.dropColumn('bio');
  });
};
