"""The ORM over the migrated schema, as an application uses it. Each check prints
"ok <what>"; a failure raises (tests/client_django.rs counts the checks)."""

import datetime
import os
from decimal import Decimal

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "mysite.settings")
import django  # noqa: E402

django.setup()
from django.db import IntegrityError, transaction  # noqa: E402
from django.db.models import Count, Sum  # noqa: E402
from django.utils import timezone  # noqa: E402
from shop.models import Customer, Order  # noqa: E402


def ok(what, condition, detail=None):
    assert condition, f"{what}: {detail!r}"
    print(f"ok {what}", flush=True)


alice = Customer.objects.create(email="alice@example.com")
bob = Customer.objects.create(email="bob@example.com", active=False)
ok("create returns the generated id and the default", alice.id and bob.id > alice.id
   and Customer.objects.get(pk=alice.pk).active is True)

now = timezone.now()
o1 = Order.objects.create(customer=alice, total=Decimal("19.99"), placed=now, note="first")
o2 = Order.objects.create(customer=alice, total=Decimal("5.00"), placed=now - datetime.timedelta(days=1))
Order.objects.create(customer=bob, total=Decimal("100.50"), placed=now)
got = Order.objects.get(pk=o1.pk)
ok("a decimal and a timestamp round-trip", got.total == Decimal("19.99") and got.placed == now,
   (got.total, got.placed, now))

orders = list(Order.objects.filter(customer__email="alice@example.com").order_by("id"))
ok("filter across the foreign key", [o.id for o in orders] == [o1.id, o2.id], orders)

made = Customer.objects.bulk_create([Customer(email=f"bulk{i}@example.com") for i in range(5)])
Order.objects.bulk_create([
    Order(customer=c, total=Decimal("1.25") * (i + 1), placed=now, note=f"bulk {i}")
    for i, c in enumerate(made)
])
ok("bulk_create", Customer.objects.count() == 7 and Order.objects.count() == 8)

counts = {c.email: c.order__count for c in Customer.objects.annotate(Count("order"))}
ok("annotate(Count)", counts["alice@example.com"] == 2 and counts["bob@example.com"] == 1, counts)

total = Order.objects.filter(customer=alice).aggregate(Sum("total"))["total__sum"]
ok("aggregate(Sum) of a decimal", total == Decimal("24.99"), total)

seen = sum(1 for _ in Order.objects.select_related("customer").order_by("placed").iterator(chunk_size=3))
ok(".iterator() through a server-side cursor", seen == 8, seen)


class Boom(Exception):
    pass


try:
    with transaction.atomic():
        Customer.objects.create(email="ghost@example.com")
        Order.objects.filter(customer=alice).update(note="changed")
        raise Boom()
except Boom:
    pass
ok("atomic() rolls back", not Customer.objects.filter(email="ghost@example.com").exists()
   and not Order.objects.filter(note="changed").exists())

with transaction.atomic():
    carol = Customer.objects.create(email="carol@example.com")
    try:
        with transaction.atomic():
            Customer.objects.create(email="carol@example.com")
        duplicate = False
    except IntegrityError:
        duplicate = True
    Order.objects.create(customer=carol, total=Decimal("7.77"), placed=now)
ok("a duplicate inside a nested atomic() rolls back to its savepoint",
   duplicate and Customer.objects.filter(email="carol@example.com").count() == 1
   and Order.objects.filter(customer=carol).count() == 1)

dave, created = Customer.objects.get_or_create(email="dave@example.com")
again, created_again = Customer.objects.get_or_create(email="dave@example.com")
ok("get_or_create", created and not created_again and again.pk == dave.pk)

eve, created = Customer.objects.update_or_create(email="eve@example.com", defaults={"active": False})
eve_again, created_again = Customer.objects.update_or_create(
    email="eve@example.com", defaults={"active": True})
with transaction.atomic():
    locked = list(Customer.objects.select_for_update().filter(email="eve@example.com"))
ok("update_or_create and select_for_update", created and not created_again
   and eve_again.pk == eve.pk and Customer.objects.get(pk=eve.pk).active and len(locked) == 1)

bob_id = bob.id
bob.delete()
ok("delete cascades", not Order.objects.filter(customer_id=bob_id).exists())

print("WORKLOAD OK")
