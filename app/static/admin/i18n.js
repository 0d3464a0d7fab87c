// The panel's words in Russian and English. The server chose the first language (auth/language.py: ?lang=,
// Accept-Language, DEFAULT_LANGUAGE); a choice made here is remembered in this browser.

const WORDS = {
  en: {
    "nav.moderation": "Moderation", "nav.shouts": "Shouts", "nav.people": "People", "nav.topics": "Topics",
    "nav.invites": "Invites", "nav.collections": "Collections", "nav.settings": "Settings", "nav.audit": "Audit trail",
    "signin.title": "Sign in to the editors' panel", "signin.email": "Email", "signin.password": "Password",
    "signin.button": "Sign in", "signout": "Sign out", "refused.title": "This panel is for editors",
    "refused.text": "You are signed in as {name}, who is not an editor or an administrator of any community.",
    "search": "Search", "community": "Community", "all": "All", "kind": "Kind", "status": "Status", "shout": "Shout",
    "text": "Text", "author": "Author", "when": "When", "actions": "Actions", "title": "Title",
    "hide": "Hide", "restore": "Restore", "delete": "Delete", "unpublish": "Unpublish", "edit": "Edit", "save": "Save",
    "cancel": "Cancel", "confirm": "Confirm", "apply": "Apply", "total": "{n} in all", "page": "page {p} of {of}",
    "prev": "Previous", "next": "Next", "none": "Nothing here.", "working": "Working", "done": "Done",
    "active": "visible", "deleted": "hidden", "published": "published", "draft": "draft",
    "status.deleted": "deleted", "moderation.title": "Comments and reactions",
    "moderation.live": "New comments appear here as they are written.",
    "moderation.new": "{n} new since you opened the page",
    "confirm.hide": "Hide this comment by {author}? Readers will no longer see it; it can be restored.",
    "confirm.deleteShout": "Delete “{title}”? Readers will no longer see it; it can be restored.",
    "confirm.unpublish": "Take “{title}” off the site? It stays a draft.",
    "confirm.roles": "Set {name}'s roles in {community} to: {roles}?",
    "confirm.merge": "Merge {sources} into “{target}”? Moving: {followers} followers, {shouts} shouts, {drafts} drafts, and the subtopics; the merged topics are removed.",
    "shouts.title": "Shouts", "lead": "Lead", "people.title": "People", "roles": "Roles", "email": "Email",
    "roles.in": "Roles in", "roles.set": "Set roles", "topics.title": "Topics", "topics.parent": "Under",
    "topics.create": "New topic", "topics.slug": "Slug", "topics.merge": "Merge into this", "topics.top": "(top)",
    "topics.preview": "What moves", "topics.counts": "{shouts} shouts, {followers} followers", "audit.title": "Audit trail", "audit.entity": "Of", "audit.action": "Action",
    "audit.actor": "By", "audit.changed": "What it changed", "error": "Error", "language": "Language",
    "invite.from": "From", "invite.to": "To", "confirm.invite": "Delete the invitation of {to} to “{shout}”?",
    "confirm.collection": "Delete the collection “{title}”? Its shouts stay.",
    "confirm.setting": "Change {key} on the running server?", "setting.key": "Name", "setting.value": "Value",
    "nav.roles": "Roles", "roles.default": "Given to who joins", "roles.offered": "Offered",
    "roles.own": "The community's own roles", "roles.create": "New role", "roles.id": "Id", "roles.name": "Name",
    "roles.permissions": "Permissions", "confirm.roleSettings": "Save the community's role settings?",
    "confirm.role": "Remove the role “{name}”, from everyone who holds it too?",
  },
  ru: {
    "nav.moderation": "Модерация", "nav.shouts": "Публикации", "nav.people": "Люди", "nav.topics": "Темы",
    "nav.invites": "Приглашения", "nav.collections": "Подборки", "nav.settings": "Настройки", "nav.audit": "Журнал",
    "signin.title": "Вход в панель редакции", "signin.email": "Почта", "signin.password": "Пароль",
    "signin.button": "Войти", "signout": "Выйти", "refused.title": "Эта панель для редакции",
    "refused.text": "Вы вошли как {name}, но не редактор и не администратор ни одного сообщества.",
    "search": "Поиск", "community": "Сообщество", "all": "Все", "kind": "Вид", "status": "Состояние", "shout": "Публикация",
    "text": "Текст", "author": "Автор", "when": "Когда", "actions": "Действия", "title": "Заголовок",
    "hide": "Скрыть", "restore": "Вернуть", "delete": "Удалить", "unpublish": "Снять с публикации", "edit": "Править",
    "save": "Сохранить", "cancel": "Отмена", "confirm": "Подтвердить", "apply": "Применить", "total": "всего {n}",
    "page": "страница {p} из {of}", "prev": "Назад", "next": "Дальше", "none": "Здесь пусто.", "working": "Выполняется",
    "done": "Готово", "active": "видно", "deleted": "скрыто", "published": "опубликовано", "draft": "черновик",
    "status.deleted": "удалено", "moderation.title": "Комментарии и реакции",
    "moderation.live": "Новые комментарии появляются здесь сразу.",
    "moderation.new": "новых с открытия страницы: {n}",
    "confirm.hide": "Скрыть комментарий автора {author}? Читатели перестанут его видеть; его можно вернуть.",
    "confirm.deleteShout": "Удалить «{title}»? Читатели перестанут её видеть; её можно вернуть.",
    "confirm.unpublish": "Снять «{title}» с публикации? Она останется черновиком.",
    "confirm.roles": "Назначить {name} в сообществе {community} роли: {roles}?",
    "confirm.merge": "Слить {sources} в «{target}»? Переедут подписчики: {followers}, публикации: {shouts}, черновики: {drafts} и подтемы; слитые темы удалятся.",
    "shouts.title": "Публикации", "lead": "Лид", "people.title": "Люди", "roles": "Роли", "email": "Почта",
    "roles.in": "Роли в", "roles.set": "Назначить роли", "topics.title": "Темы", "topics.parent": "Внутри",
    "topics.create": "Новая тема", "topics.slug": "Адрес", "topics.merge": "Слить сюда", "topics.top": "(верх)",
    "topics.preview": "Что переедет", "topics.counts": "публикаций: {shouts}, подписчиков: {followers}", "audit.title": "Журнал действий", "audit.entity": "Что", "audit.action": "Действие",
    "audit.actor": "Кто", "audit.changed": "Что изменилось", "error": "Ошибка", "language": "Язык",
    "invite.from": "От", "invite.to": "Кому", "confirm.invite": "Удалить приглашение {to} к «{shout}»?",
    "confirm.collection": "Удалить подборку «{title}»? Публикации останутся.",
    "confirm.setting": "Изменить {key} на работающем сервере?", "setting.key": "Имя", "setting.value": "Значение",
    "nav.roles": "Роли", "roles.default": "Даются вступившим", "roles.offered": "Доступны",
    "roles.own": "Свои роли сообщества", "roles.create": "Новая роль", "roles.id": "Код", "roles.name": "Название",
    "roles.permissions": "Права", "confirm.roleSettings": "Сохранить настройки ролей сообщества?",
    "confirm.role": "Удалить роль «{name}», в том числе у всех, кому она дана?",
  },
};

export const LANGUAGES = Object.keys(WORDS);
let current = localStorage.getItem("admin.lang") || document.documentElement.lang || "ru";
if (!WORDS[current]) current = "ru";
document.documentElement.lang = current;

export function lang() { return current; }

export function setLang(next) {
  if (!WORDS[next]) return;
  current = next;
  localStorage.setItem("admin.lang", next);
  document.documentElement.lang = next;
}

export function t(key, values = {}) {
  const text = WORDS[current][key] ?? WORDS.en[key] ?? key;
  return text.replace(/\{(\w+)\}/g, (_, name) => String(values[name] ?? ""));
}

export function when(seconds) {
  return seconds ? new Date(seconds * 1000).toLocaleString(current) : "";
}
