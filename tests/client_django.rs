//! Django 5.2 against the real `pgwide serve`, stock settings: a project as
//! `startproject` and `startapp` make it (the contrib apps: admin, auth, contenttypes,
//! sessions), with an app whose models have the default auto `id`, a ForeignKey, a
//! DateTimeField, a DecimalField, a BooleanField(default=True) and a
//! CharField(unique=True). `makemigrations` writes the app's migration, `migrate`
//! applies every migration, the ORM runs over the result (`workload.py`),
//! `createsuperuser` makes the admin user and the admin's pages load
//! (`admin_check.py`), `inspectdb` writes the models back from the database; the app's
//! migrations are then reversed and applied again.
//! The project is copied to a temporary directory, so the migration Django writes
//! stays out of the source tree. scripts/test installs Django.

mod server_process;

use server_process::{assert_success, clients_dir, Pgwide};
use std::path::Path;
use std::process::Command;

const SUPERUSER_PASSWORD: &str = "s3cret-pw-for-the-admin";

/// Copies directory `from` into `to`, recursively.
fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("create the project copy");
    for entry in std::fs::read_dir(from).expect("read the project") {
        let entry = entry.expect("project entry");
        let target = to.join(entry.file_name());
        if entry.file_type().expect("file type").is_dir() {
            if entry.file_name() != "__pycache__" {
                copy_dir(&entry.path(), &target);
            }
        } else {
            std::fs::copy(entry.path(), &target).expect("copy a project file");
        }
    }
}

#[test]
fn django_migrates_and_serves_the_admin() {
    let installed = Command::new("python3")
        .args(["-c", "import django, psycopg"])
        .status()
        .map(|s| s.success())
        .unwrap_or(false);
    assert!(
        installed,
        "python3 with Django and psycopg is missing: run scripts/test to install them"
    );
    let project = tempfile::tempdir().expect("temporary directory");
    copy_dir(&clients_dir("django"), project.path());
    let dir = project.path();
    let server = Pgwide::fresh();
    let env = [
        ("DJANGO_SUPERUSER_USERNAME", "admin"),
        ("DJANGO_SUPERUSER_EMAIL", "admin@example.com"),
        ("DJANGO_SUPERUSER_PASSWORD", SUPERUSER_PASSWORD),
    ];
    let run = |args: &[&str]| {
        let output = server.run_with_env("python3", args, dir, &env);
        assert_success(&args.join(" "), &output)
    };
    let made = run(&["manage.py", "makemigrations", "shop"]);
    assert!(made.contains("0001_initial.py"), "{made}");
    let migrated = run(&["manage.py", "migrate", "--noinput"]);
    for migration in [
        "Applying contenttypes.0001_initial... OK",
        "Applying auth.0001_initial... OK",
        "Applying admin.0001_initial... OK",
        "Applying sessions.0001_initial... OK",
        "Applying shop.0001_initial... OK",
    ] {
        assert!(migrated.contains(migration), "{migration}:\n{migrated}");
    }

    let workload = run(&["workload.py"]);
    assert!(workload.contains("WORKLOAD OK"), "{workload}");
    let checks = workload.lines().filter(|l| l.starts_with("ok ")).count();
    assert_eq!(checks, 12, "a check was skipped:\n{workload}");

    let superuser = run(&["manage.py", "createsuperuser", "--noinput"]);
    assert!(
        superuser.contains("Superuser created successfully."),
        "{superuser}"
    );
    let admin = run(&["admin_check.py"]);
    assert!(admin.contains("ADMIN OK"), "{admin}");
    assert_eq!(
        admin.lines().filter(|l| l.starts_with("ok GET")).count(),
        5,
        "{admin}"
    );

    // inspectdb reads every table back through Django's introspection (its constraint
    // and index queries unnest `conkey` and `indkey` WITH ORDINALITY): the models it
    // writes are those PostgreSQL 15 gives for the same migrations.
    let inspected = run(&["manage.py", "inspectdb"]);
    assert!(!inspected.contains("Unable to inspect"), "{inspected}");
    for model in [
        "class ShopOrder(models.Model):\n    id = models.BigAutoField(primary_key=True)\n    \
         total = models.DecimalField(max_digits=10, decimal_places=2)\n    placed = \
         models.DateTimeField()\n    note = models.CharField(max_length=100)\n    customer = \
         models.ForeignKey(ShopCustomer, models.DO_NOTHING)\n",
        "    email = models.CharField(unique=True, max_length=200)\n",
        "        db_table = 'auth_group_permissions'\n        unique_together = (('group', \
         'permission'),)\n",
    ] {
        assert!(inspected.contains(model), "{model}\nnot in:\n{inspected}");
    }

    let again = run(&["manage.py", "migrate", "--noinput"]);
    assert!(again.contains("No migrations to apply."), "{again}");
    let reversed = run(&["manage.py", "migrate", "shop", "zero", "--noinput"]);
    assert!(
        reversed.contains("Unapplying shop.0001_initial... OK"),
        "{reversed}"
    );
    let reapplied = run(&["manage.py", "migrate", "shop", "--noinput"]);
    assert!(
        reapplied.contains("Applying shop.0001_initial... OK"),
        "{reapplied}"
    );
}
