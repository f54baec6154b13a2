from django.urls import path

from . import views

urlpatterns = [
    path("", views.home, name="home"),
    path("tables/<int:table_id>/", views.table_detail, name="table"),
]
