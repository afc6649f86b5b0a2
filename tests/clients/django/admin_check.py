"""The admin site, logged in as the superuser createsuperuser made: each page is
rendered from the database (tests/client_django.rs counts the pages)."""

import os

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "mysite.settings")
import django  # noqa: E402

django.setup()
from django.test import Client  # noqa: E402

client = Client()
assert client.login(username="admin", password=os.environ["DJANGO_SUPERUSER_PASSWORD"]), "login failed"
for url in [
    "/admin/",
    "/admin/shop/order/",
    "/admin/shop/customer/",
    "/admin/shop/order/?placed__gte=2000-01-01",
    "/admin/auth/user/",
]:
    response = client.get(url)
    assert response.status_code == 200, (url, response.status_code, response.content[:2000])
    print(f"ok GET {url}", flush=True)
print("ADMIN OK")
