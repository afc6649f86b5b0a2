// Knex's query builder over the migrated schema: each check prints "ok <what>", and
// any failure exits non-zero with the error (tests/client_knex.rs counts the checks).
const knex = require('knex')(require('./knexfile'));

function check(what, condition, detail) {
  if (!condition) throw new Error(`${what}: ${JSON.stringify(detail)}`);
  console.log(`ok ${what}`);
}

async function main() {
  check('tables exist', (await knex.schema.hasTable('users')) && (await knex.schema.hasColumn('users', 'bio')), null);

  const [ann] = await knex('users')
    .insert({ email: 'ann@x', name: 'Ann', created_at: knex.fn.now(), updated_at: knex.fn.now() })
    .returning(['id', 'email']);
  check('insert returning the generated id', Number.isInteger(ann.id) && ann.email === 'ann@x', ann);

  const merged = await knex('users')
    .insert({ email: 'ann@x', name: 'Ann 2', updated_at: knex.fn.now() })
    .onConflict('email')
    .merge()
    .returning('*');
  check('onConflict(email).merge() updates the row', merged.length === 1 && merged[0].id === ann.id && merged[0].name === 'Ann 2', merged);

  const ignored = await knex('users').insert({ email: 'ann@x', name: 'nobody' }).onConflict('email').ignore().returning('id');
  check('onConflict(email).ignore() inserts nothing', ignored.length === 0, ignored);

  const bulk = await knex('users')
    .insert([{ email: 'bob@x', name: 'Bob' }, { email: 'ann@x', name: 'Ann 3' }])
    .onConflict('email')
    .merge(['name'])
    .returning(['email', 'name']);
  const names = Object.fromEntries(bulk.map((r) => [r.email, r.name]));
  check('a bulk upsert inserts one row and merges the other', names['bob@x'] === 'Bob' && names['ann@x'] === 'Ann 3', bulk);

  await knex('posts').insert([
    { user_id: ann.id, title: 'Hello', slug: 'hello' },
    { user_id: ann.id, title: 'Again', slug: 'again' },
  ]);
  const joined = await knex('posts').join('users', 'users.id', 'posts.user_id').where('posts.title', 'Hello').select('posts.slug', 'users.email');
  check('join across the foreign key', joined.length === 1 && joined[0].email === 'ann@x', joined);

  let duplicate = null;
  try {
    await knex('posts').insert({ user_id: ann.id, title: 'Copy', slug: 'hello' });
  } catch (e) {
    duplicate = e.code;
  }
  check('a duplicate slug is 23505', duplicate === '23505', duplicate);

  let orphan = null;
  try {
    await knex('posts').insert({ user_id: 999999, title: 'Orphan', slug: 'orphan' });
  } catch (e) {
    orphan = e.code;
  }
  check('a post of no user is 23503', orphan === '23503', orphan);

  try {
    await knex.transaction(async (trx) => {
      await trx('users').insert({ email: 'gone@x', name: 'Gone' });
      throw new Error('roll back');
    });
  } catch (e) {
    if (e.message !== 'roll back') throw e;
  }
  check('a rolled-back transaction leaves nothing', (await knex('users').where('email', 'gone@x')).length === 0, null);

  const counts = await knex('posts').count('* as n').groupBy('user_id').select('user_id');
  check('count grouped by user', counts.length === 1 && Number(counts[0].n) === 2, counts);

  await knex('users').where('id', ann.id).del();
  const left = await knex('posts').count('* as n');
  check('deleting a user cascades to the posts', Number(left[0].n) === 0, left);
}

main()
  .then(() => console.log('KNEX APP OK'))
  .catch((e) => {
    console.error('KNEX APP FAILED:', e.message, e.code || '');
    process.exitCode = 1;
  })
  .finally(() => knex.destroy());
