from django.db import models


class Customer(models.Model):
    email = models.CharField(max_length=200, unique=True)
    active = models.BooleanField(default=True)
    joined = models.DateTimeField(auto_now_add=True)

    def __str__(self):
        return self.email


class Order(models.Model):
    customer = models.ForeignKey(Customer, on_delete=models.CASCADE)
    total = models.DecimalField(max_digits=10, decimal_places=2)
    placed = models.DateTimeField()
    note = models.CharField(max_length=100, blank=True)
