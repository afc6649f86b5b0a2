// The schema a Knex user writes first: an increments() key, timestamps(), a unique
// column, an index, and a foreign key with ON DELETE CASCADE.
exports.up = async function (knex) {
  await knex.schema.createTable('users', (t) => {
    t.increments();
    t.string('email').notNullable().unique();
    t.string('name');
    t.timestamps();
  });
  await knex.schema.createTable('posts', (t) => {
    t.increments();
    t.integer('user_id').unsigned().notNullable();
    t.foreign('user_id').references('id').inTable('users').onDelete('CASCADE');
    t.string('title').notNullable();
    t.string('slug').notNullable();
    t.unique(['slug']);
    t.index(['title']);
    t.timestamps(true, true);
  });
};

exports.down = async function (knex) {
  await knex.schema.dropTable('posts');
  await knex.schema.dropTable('users');
};
