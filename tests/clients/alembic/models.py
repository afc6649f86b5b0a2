from datetime import datetime
from decimal import Decimal

from sqlalchemy import (Column, DateTime, Enum, ForeignKey, Index, Integer,
                        Numeric, String, UniqueConstraint, func)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship


class Base(DeclarativeBase):
    pass


class Author(Base):
    __tablename__ = "author"
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    name: Mapped[str] = mapped_column(String(100), nullable=False)
    email: Mapped[str] = mapped_column(String(200), nullable=False)
    created_at: Mapped[datetime] = mapped_column(DateTime, server_default=func.now(), nullable=False)
    books: Mapped[list["Book"]] = relationship(back_populates="author")
    __table_args__ = (UniqueConstraint("email", name="uq_author_email"),)


class Book(Base):
    __tablename__ = "book"
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    author_id: Mapped[int] = mapped_column(ForeignKey("author.id"), nullable=False)
    title: Mapped[str] = mapped_column(String(200), nullable=False)
    price: Mapped[Decimal] = mapped_column(Numeric(10, 2), nullable=False)
    published: Mapped[datetime | None] = mapped_column(DateTime, nullable=True)
    status: Mapped[str] = mapped_column(
        Enum("draft", "review", "out", name="book_status"), nullable=False, server_default="draft"
    )
    author: Mapped[Author] = relationship(back_populates="books")
    __table_args__ = (
        Index("ix_book_title", "title"),
        UniqueConstraint("author_id", "title", name="uq_book_author_title"),
    )
