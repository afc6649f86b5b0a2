// Sequelize 6 as its docs use it with PostgreSQL: default models, associations and an
// index, `sync({ force: true })`, then queries over the result. Each check prints
// "ok <what>", and any failure exits non-zero with the error (tests/client_sequelize.rs
// counts the checks). The connection comes from PGHOST/PGPORT/PGUSER/PGDATABASE; every
// statement Sequelize sends is logged to stderr.
const { Sequelize, DataTypes, UniqueConstraintError } = require('sequelize');

const sequelize = new Sequelize({
  dialect: 'postgres',
  host: process.env.PGHOST,
  port: Number(process.env.PGPORT),
  username: process.env.PGUSER,
  database: process.env.PGDATABASE,
  logging: (sql) => console.error(sql),
});

const User = sequelize.define('User', {
  email: { type: DataTypes.STRING, unique: true, allowNull: false },
  name: DataTypes.STRING,
  active: { type: DataTypes.BOOLEAN, defaultValue: true },
  balance: DataTypes.DECIMAL(10, 2),
  status: { type: DataTypes.ENUM('new', 'active', 'banned'), defaultValue: 'new' },
});
const Post = sequelize.define(
  'Post',
  { title: DataTypes.STRING, body: DataTypes.TEXT },
  { indexes: [{ fields: ['title'] }] },
);
User.hasMany(Post, { onDelete: 'CASCADE' });
Post.belongsTo(User, { onDelete: 'CASCADE' });

function check(what, condition, detail) {
  if (!condition) throw new Error(`${what}: ${JSON.stringify(detail)}`);
  console.log(`ok ${what}`);
}

async function main() {
  await sequelize.sync({ force: true });
  const tables = await sequelize.getQueryInterface().showAllTables();
  check('sync({ force: true }) creates the tables', tables.includes('Users') && tables.includes('Posts'), tables);

  const created = await User.create({ email: 'ann@x', name: 'Ann', balance: 12.5 });
  const ann = await User.findOne({ where: { email: 'ann@x' } });
  check(
    'create, then read back the decimal, the default and the timestamp',
    Number.isInteger(created.id) &&
      ann.id === created.id &&
      ann.balance === '12.50' &&
      ann.active === true &&
      ann.createdAt instanceof Date,
    ann && ann.toJSON(),
  );

  const bob = await User.create({ email: 'bob@x', name: 'Bob' });
  const posts = await Post.bulkCreate([
    { title: 'Hello', body: 'first', UserId: ann.id },
    { title: 'Again', body: 'second', UserId: ann.id },
    { title: 'Bob here', body: 'third', UserId: bob.id },
  ]);
  check('bulkCreate returns the generated ids', posts.length === 3 && posts.every((p) => Number.isInteger(p.id)), posts);

  const users = await User.findAll({ include: Post, order: [['id', 'ASC'], [Post, 'id', 'ASC']] });
  check(
    'findAll with include joins across the foreign key',
    users.length === 2 &&
      users[0].Posts.map((p) => p.title).join() === 'Hello,Again' &&
      users[1].Posts.map((p) => p.title).join() === 'Bob here',
    users.map((u) => u.toJSON()),
  );

  const [updated] = await User.upsert({ email: 'ann@x', name: 'Ann 2' });
  check(
    'upsert of an existing email updates the row and returns it',
    updated.id === ann.id && updated.name === 'Ann 2' && (await User.count()) === 2,
    updated && updated.toJSON(),
  );

  const [inserted] = await User.upsert({ email: 'cid@x', name: 'Cid' });
  check(
    'upsert of a new email inserts it',
    Number.isInteger(inserted.id) && inserted.id !== ann.id && inserted.name === 'Cid' && (await User.count()) === 3,
    inserted && inserted.toJSON(),
  );

  let duplicate = null;
  try {
    await User.create({ email: 'bob@x', name: 'Bob again' });
  } catch (e) {
    duplicate = e;
  }
  check(
    'a duplicate email raises SequelizeUniqueConstraintError',
    duplicate instanceof UniqueConstraintError &&
      duplicate.name === 'SequelizeUniqueConstraintError' &&
      duplicate.original.code === '23505',
    duplicate && { name: duplicate.name, message: duplicate.message, code: duplicate.original && duplicate.original.code },
  );

  try {
    await sequelize.transaction(async (t) => {
      await User.create({ email: 'gone@x', name: 'Gone' }, { transaction: t });
      throw new Error('roll back');
    });
  } catch (e) {
    if (e.message !== 'roll back') throw e;
  }
  const afterRollback = await User.count();
  check('a transaction that throws rolls back', afterRollback === 3 && !(await User.findOne({ where: { email: 'gone@x' } })), afterRollback);

  await User.update({ status: 'banned' }, { where: { email: 'bob@x' } });
  const byStatus = await User.findAll({ order: [['status', 'DESC'], ['email', 'ASC']] });
  check(
    'an ENUM attribute defaults, updates and sorts in its declared order',
    byStatus.map((u) => `${u.email}:${u.status}`).join() === 'bob@x:banned,ann@x:new,cid@x:new',
    byStatus.map((u) => u.toJSON()),
  );
  let badStatus = null;
  try {
    await User.update({ status: 'gone' }, { where: { email: 'ann@x' }, validate: false });
  } catch (e) {
    badStatus = e;
  }
  check(
    'a value the ENUM lacks is refused by the database (22P02)',
    badStatus && badStatus.original && badStatus.original.code === '22P02',
    badStatus && { name: badStatus.name, message: badStatus.message },
  );

  const counts = await Post.count({ group: ['UserId'] });
  const byUser = Object.fromEntries(counts.map((c) => [c.UserId, Number(c.count)]));
  check('count grouped by UserId', counts.length === 2 && byUser[ann.id] === 2 && byUser[bob.id] === 1, counts);

  await ann.destroy();
  const left = await Post.findAll();
  check('destroying a user cascades to its posts', left.length === 1 && left[0].UserId === bob.id, left);

  await sequelize.sync({ force: true });
  check('a second sync({ force: true }) drops and recreates', (await User.count()) === 0 && (await Post.count()) === 0, null);
}

main()
  .then(() => console.log('SEQUELIZE APP OK'))
  .catch((e) => {
    const code = e.code || (e.original && e.original.code) || '';
    console.error('SEQUELIZE APP FAILED:', e.name, e.message, code);
    process.exitCode = 1;
  })
  .finally(() => sequelize.close());
