"""Chinese (no word boundaries: cues are substrings)."""

from __future__ import annotations

from gitmem.lang import Language

_V = r"[^\s，。,.的把从到成在]{1,12}"

LANGUAGE = Language(
    code="zh",
    families={
        "residence": r"住在|搬到|搬家|居住|定居|住址",
        "employer": r"在\S{1,8}工作|在\S{1,8}上班|入职|跳槽|辞职",
        "partner": r"结婚|离婚|订婚|交往",
        "name": r"改名|名字改",
        "age": r"\d+岁",
        "manager": r"经理是|领导是|上司是",
        "email": r"邮箱是|\S+@\S+\.\w+",
        "phone": r"电话是|手机号是|号码是|新号码",
        "vehicle": r"开车|买了车|换了车",
        "diet": r"吃素|素食",
        "leave": r"产假|复工",
        "hospital": r"住院|出院",
        "commute": r"通勤|上班坐",
        "study": r"在\S{1,8}读书|上大学|专业是",
        "password": r"密码是",
        "role": r"负责|主管|接手",
        "place": r"在\S{1,4}楼|会议室|办公室在|地点",
        "tool": r"运行在|部署在|迁移到|存储在",
        "schedule": r"\d{1,2}点|\d{1,2}:\d{2}|周[一二三四五六日]|星期|每天",
        "deadline": r"截止|期限",
        "care": r"医生是|房东是",
        "provider": r"套餐|运营商|开户",
        "household": r"和\S{1,6}住|同居",
        "birthday": r"生日是|出生于",
    },
    attribute_nouns={
        "residence": r"地址|住址|家",
        "employer": r"公司|工作单位",
        "partner": r"妻子|丈夫|老婆|老公|女朋友|男朋友",
        "name": r"名字",
        "manager": r"经理|领导|上司",
        "email": r"邮箱",
        "phone": r"电话|手机|手机号|号码",
        "vehicle": r"车",
        "password": r"密码",
        "birthday": r"生日",
    },
    change=r"现在|已经|不再|搬到|换成|改为|改成|变成|替换|换了|改到",
    old_value=(
        rf"从(?P<old>{_V})(?:换|改|搬|迁)到",
        rf"把(?P<old>{_V})换成",
        rf"(?P<old>{_V})换成",
        rf"不再(?:用|在|住在)(?P<old>{_V})",
    ),
    continuity=r"还是|仍然|依然|继续",
    plan=r"将要|打算|计划|决定|下周|下个月|明年",
    event=r"去了|参观|见了|买了|看了|吃了|旅游",
    many=r"会说|会弹|喜欢|养了|去过",
    additive=r"也|还有|另一",
    household=r"和\S{1,6}住|同居",
    possessive=(r"(?P<owner>[^\s，。的]{1,6})的(?P<noun>[^\s，。的是在住]{1,4}?)"
                r"(?P<after>是|:|：|在|住|.{0,4})"),
    copula=r"是|:|：",
    qualifiers=r"私人|家里的|公司的",
    first_person=r"我|我们",
    relations=r"父母|妈妈|爸爸|妻子的|丈夫的|朋友|同事|孩子|团队|部门|办公室|狗|猫",
)
